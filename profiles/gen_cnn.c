/* gen_cnn.c: convolutional model generators: resnet / wresnet (ImageNet and
   CIFAR-style), inception (v3, v4), nasnet (NASNet-A), densenet, unet,
   shufflenet (v2) and vgg, with shapes from the real architectures and times
   from the cost model.

   Operator granularity (what Table 1 of the SwapAdvisor paper counts, see
   docs/table1.md): a convolution layer is two operators, the convolution
   and its batch norm with the ReLU fused into it (cuDNN's BN+activation
   fusion; MXNet's fused BatchNorm), and one parameter tensor (weights plus
   the batch norm's scale and shift, updated by one optimizer operator). A
   ReLU that no batch norm precedes is fused into the next operator's input
   (NASNet's ReLU-SepConv) or into the preceding add (ResNet's add+ReLU). */
#include <stdio.h>
#include <string.h>

#include "models.h"
#include "nn.h"

#define COMMON_PARAMS(batch_def)                                                                   \
    {"batch", PT_INT, batch_def, "samples per iteration", NULL, 1, 1e9},                          \
        {"dtype", PT_CHOICE, "fp32", "element type (fp16: tensor-core peak for conv/matmul)",     \
         "fp32|fp16", 1, 0},                                                                       \
        {"optimizer", PT_CHOICE, "sgd", "optimizer (momentum and adam add state tensors)",        \
         "sgd|momentum|adam", 1, 0},                                                               \
        {"inference", PT_BOOL, "false", "forward pass only", NULL, 1, 0}

static nn_t image_input(nn_net *n, int64_t b, int64_t c, int64_t h, int64_t w)
{
    int64_t d[4] = {b, c, h, w};
    return nn_input(n, "data", 4, d);
}

/* classifier head: global pool, fully connected, loss (training only) */
static nn_t head(nn_net *n, nn_t x, int64_t classes, const nn_common *c)
{
    nn_scope(n, "head");
    nn_t p = x.nd == 4 ? nn_gpool(n, "pool", x) : x;
    nn_t y = nn_linear(n, "fc", p, classes, NN_BIAS);
    return c->inference ? y : nn_loss(n, "loss", y);
}

static int64_t scaled(int64_t ch, double width)
{
    int64_t v = (int64_t)((double)ch * width + 0.5);
    return v < 1 ? 1 : v;
}

/* ---- resnet / wresnet ---- */

static const param_def resnet_params[] = {
    {"depth", PT_INT, "50", "layers: 18, 34, 50, 101, 152, 200 (ImageNet) or 6n+2 "
     "(CIFAR-style: 20, 32, 44, 56, 110, 1202)", NULL, 8, 1e5},
    {"width", PT_FLOAT, "1", "channel multiplier of every convolution (WResNet-D-X)", NULL, 0.01,
     1e3},
    {"image", PT_INT, "0", "input height and width (0: 224 ImageNet, 32 CIFAR-style)", NULL, 0,
     1e5},
    {"classes", PT_INT, "0", "classes (0: 1000 ImageNet, 10 CIFAR-style)", NULL, 0, 1e7},
    COMMON_PARAMS("32"),
    PARAM_END};

static const param_def wresnet_params[] = {
    {"depth", PT_INT, "152", "layers (as for resnet)", NULL, 8, 1e5},
    {"width", PT_FLOAT, "10", "channel multiplier of every convolution (WResNet-D-X)", NULL, 0.01,
     1e3},
    {"image", PT_INT, "0", "input height and width (0: 224 ImageNet, 32 CIFAR-style)", NULL, 0,
     1e5},
    {"classes", PT_INT, "0", "classes (0: 1000 ImageNet, 10 CIFAR-style)", NULL, 0, 1e7},
    COMMON_PARAMS("64"),
    PARAM_END};

static nn_t basic_block(nn_net *n, nn_t x, int64_t ch, int stride, int cifar)
{
    nn_t y = nn_convs(n, "conv1", x, ch, 3, stride, NN_BN | NN_RELU);
    y = nn_convs(n, "conv2", y, ch, 3, 1, NN_BN);
    nn_t sc = x;
    if (stride != 1 || x.d[1] != ch) {
        if (cifar) { /* option A: subsample and pad the channels with zeros */
            int64_t d[4] = {x.d[0], ch, y.d[2], y.d[3]};
            sc = nn_copy(n, "shortcut", "pad_shortcut", x, 4, d);
        } else {
            sc = nn_convs(n, "shortcut", x, ch, 1, stride, NN_BN);
        }
    }
    return nn_add(n, "add", y, sc, NN_RELU);
}

static nn_t bottleneck(nn_net *n, nn_t x, int64_t mid, int64_t out, int stride)
{
    nn_t y = nn_convs(n, "conv1", x, mid, 1, 1, NN_BN | NN_RELU);
    y = nn_convs(n, "conv2", y, mid, 3, stride, NN_BN | NN_RELU);
    y = nn_convs(n, "conv3", y, out, 1, 1, NN_BN);
    nn_t sc = x;
    if (stride != 1 || x.d[1] != out)
        sc = nn_convs(n, "shortcut", x, out, 1, stride, NN_BN);
    return nn_add(n, "add", y, sc, NN_RELU);
}

static int gen_resnet_impl(const char *model, const param_set *ps, const dev_spec *dev,
                           graph_profile **out, sw_err *err)
{
    nn_common c;
    nn_common_get(ps, &c);
    int64_t depth = params_int(ps, "depth");
    double X = params_float(ps, "width");
    static const int units[][5] = {{18, 2, 2, 2, 2},  {34, 3, 4, 6, 3},   {50, 3, 4, 6, 3},
                                   {101, 3, 4, 23, 3}, {152, 3, 8, 36, 3}, {200, 3, 24, 36, 3}};
    int imagenet = -1;
    for (int i = 0; i < 6; i++)
        if (units[i][0] == depth)
            imagenet = i;
    if (imagenet < 0 && (depth - 2) % 6 != 0)
        return sw_fail(err, SW_EINVAL, "model %s: depth %lld is neither an ImageNet ResNet (18, "
                       "34, 50, 101, 152, 200) nor CIFAR-style 6n+2 (20, 32, 44, 56, 110, 1202)",
                       model, (long long)depth);
    int64_t image = params_int(ps, "image"), classes = params_int(ps, "classes");
    if (!image)
        image = imagenet >= 0 ? 224 : 32;
    if (!classes)
        classes = imagenet >= 0 ? 1000 : 10;
    char name[96];
    if (X != 1)
        snprintf(name, sizeof name, "wresnet-%lld-%g", (long long)depth, X);
    else
        snprintf(name, sizeof name, "resnet-%lld", (long long)depth);
    nn_net n;
    if (nn_init(&n, name, dev, c.fp16, c.batch))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    nn_t x = image_input(&n, c.batch, 3, image, image);
    if (imagenet >= 0) {
        nn_scope(&n, "stem");
        x = nn_convs(&n, "conv", x, scaled(64, X), 7, 2, NN_BN | NN_RELU);
        x = nn_pool(&n, "pool", x, 1, 3, 2, 1, 0);
        int bottle = depth >= 50;
        for (int s = 0; s < 4; s++) {
            int64_t mid = scaled(64 << s, X), outc = bottle ? scaled(256 << s, X) : mid;
            for (int u = 0; u < units[imagenet][s + 1]; u++) {
                nn_scope(&n, "stage%d.unit%d", s + 1, u + 1);
                int stride = u == 0 && s > 0 ? 2 : 1;
                x = bottle ? bottleneck(&n, x, mid, outc, stride) : basic_block(&n, x, mid, stride, 0);
            }
        }
    } else {
        int64_t per = (depth - 2) / 6;
        nn_scope(&n, "stem");
        x = nn_convs(&n, "conv", x, scaled(16, X), 3, 1, NN_BN | NN_RELU);
        for (int s = 0; s < 3; s++)
            for (int64_t u = 0; u < per; u++) {
                nn_scope(&n, "stage%d.unit%lld", s + 1, (long long)u + 1);
                x = basic_block(&n, x, scaled(16 << s, X), u == 0 && s > 0 ? 2 : 1, 1);
            }
    }
    nn_t loss = head(&n, x, classes, &c);
    return nn_finish(&n, model, ps, loss, &c, out, err);
}

static int gen_resnet(const param_set *ps, const dev_spec *dev, graph_profile **out, sw_err *err)
{
    return gen_resnet_impl("resnet", ps, dev, out, err);
}

static int gen_wresnet(const param_set *ps, const dev_spec *dev, graph_profile **out, sw_err *err)
{
    return gen_resnet_impl("wresnet", ps, dev, out, err);
}

const model_def model_resnet = {"resnet", "ResNet (ImageNet 18-200 or CIFAR-style 6n+2, e.g. 32, "
                                "1202); --width widens every convolution", resnet_params,
                                gen_resnet};
const model_def model_wresnet = {"wresnet", "wide ResNet, WResNet-D-X (paper: --depth 152 "
                                 "--width 10 --batch 64)", wresnet_params, gen_wresnet};

/* ---- inception (v4 and v3) ---- */

static const param_def inception_params[] = {
    {"version", PT_INT, "4", "Inception version: 4 (Szegedy et al. 2016) or 3", NULL, 3, 4},
    {"width", PT_FLOAT, "1", "channel multiplier of every convolution (Inception-X)", NULL, 0.01,
     1e3},
    {"image", PT_INT, "299", "input height and width", NULL, 75, 1e5},
    {"classes", PT_INT, "1000", "classes", NULL, 1, 1e7},
    {"aux", PT_BOOL, "false", "v3 only: the auxiliary classifier (PipeDream's graph has it)",
     NULL, 1, 0},
    {"relu", PT_CHOICE, "fused", "fused: BN and ReLU one operator, two tensors per convolution "
     "kept for the backward pass; separate: ReLU its own operator reading its input and output "
     "backward (cuDNN's activation backward), three tensors kept (docs/table1.md)",
     "fused|separate", 1, 0},
    COMMON_PARAMS("64"),
    PARAM_END};

typedef struct incep {
    nn_net *n;
    double X;
    int separate; /* relu=separate */
} incep;

/* conv + BN(+ReLU) with channels widened by X */
static nn_t cbr(incep *I, const char *name, nn_t x, int64_t k, int r, int s, int stride, int ph,
                int pw)
{
    if (I->separate)
        return nn_relu_xy(I->n, name,
                          nn_conv(I->n, name, x, scaled(k, I->X), r, s, stride, ph, pw, 1, NN_BN));
    return nn_conv(I->n, name, x, scaled(k, I->X), r, s, stride, ph, pw, 1, NN_BN | NN_RELU);
}
#define SAME(r) ((r) / 2)

static nn_t incep4_a(incep *I, nn_t x)
{
    nn_t b[4];
    b[0] = cbr(I, "b0", x, 96, 1, 1, 1, 0, 0);
    b[1] = cbr(I, "b1a", x, 64, 1, 1, 1, 0, 0);
    b[1] = cbr(I, "b1b", b[1], 96, 3, 3, 1, 1, 1);
    b[2] = cbr(I, "b2a", x, 64, 1, 1, 1, 0, 0);
    b[2] = cbr(I, "b2b", b[2], 96, 3, 3, 1, 1, 1);
    b[2] = cbr(I, "b2c", b[2], 96, 3, 3, 1, 1, 1);
    b[3] = nn_pool(I->n, "b3pool", x, 0, 3, 1, 1, 0);
    b[3] = cbr(I, "b3", b[3], 96, 1, 1, 1, 0, 0);
    return nn_concat(I->n, "concat", b, 4, 1);
}

static nn_t incep4_b(incep *I, nn_t x)
{
    nn_t b[4];
    b[0] = cbr(I, "b0", x, 384, 1, 1, 1, 0, 0);
    b[1] = cbr(I, "b1a", x, 192, 1, 1, 1, 0, 0);
    b[1] = cbr(I, "b1b", b[1], 224, 1, 7, 1, 0, 3);
    b[1] = cbr(I, "b1c", b[1], 256, 7, 1, 1, 3, 0);
    b[2] = cbr(I, "b2a", x, 192, 1, 1, 1, 0, 0);
    b[2] = cbr(I, "b2b", b[2], 192, 7, 1, 1, 3, 0);
    b[2] = cbr(I, "b2c", b[2], 224, 1, 7, 1, 0, 3);
    b[2] = cbr(I, "b2d", b[2], 224, 7, 1, 1, 3, 0);
    b[2] = cbr(I, "b2e", b[2], 256, 1, 7, 1, 0, 3);
    b[3] = nn_pool(I->n, "b3pool", x, 0, 3, 1, 1, 0);
    b[3] = cbr(I, "b3", b[3], 128, 1, 1, 1, 0, 0);
    return nn_concat(I->n, "concat", b, 4, 1);
}

static nn_t incep4_c(incep *I, nn_t x)
{
    nn_t b[6];
    b[0] = cbr(I, "b0", x, 256, 1, 1, 1, 0, 0);
    nn_t t = cbr(I, "b1a", x, 384, 1, 1, 1, 0, 0);
    b[1] = cbr(I, "b1b", t, 256, 1, 3, 1, 0, 1);
    b[2] = cbr(I, "b1c", t, 256, 3, 1, 1, 1, 0);
    t = cbr(I, "b2a", x, 384, 1, 1, 1, 0, 0);
    t = cbr(I, "b2b", t, 448, 3, 1, 1, 1, 0);
    t = cbr(I, "b2c", t, 512, 1, 3, 1, 0, 1);
    b[3] = cbr(I, "b2d", t, 256, 1, 3, 1, 0, 1);
    b[4] = cbr(I, "b2e", t, 256, 3, 1, 1, 1, 0);
    b[5] = nn_pool(I->n, "b3pool", x, 0, 3, 1, 1, 0);
    b[5] = cbr(I, "b3", b[5], 256, 1, 1, 1, 0, 0);
    return nn_concat(I->n, "concat", b, 6, 1);
}

static nn_t inception_v4(incep *I, nn_t x)
{
    nn_net *n = I->n;
    nn_t b[3];
    nn_scope(n, "stem");
    x = cbr(I, "conv1", x, 32, 3, 3, 2, 0, 0);
    x = cbr(I, "conv2", x, 32, 3, 3, 1, 0, 0);
    x = cbr(I, "conv3", x, 64, 3, 3, 1, 1, 1);
    nn_scope(n, "mixed3a");
    b[0] = nn_pool(n, "pool", x, 1, 3, 2, 0, 0);
    b[1] = cbr(I, "conv", x, 96, 3, 3, 2, 0, 0);
    x = nn_concat(n, "concat", b, 2, 1);
    nn_scope(n, "mixed4a");
    b[0] = cbr(I, "b0a", x, 64, 1, 1, 1, 0, 0);
    b[0] = cbr(I, "b0b", b[0], 96, 3, 3, 1, 0, 0);
    b[1] = cbr(I, "b1a", x, 64, 1, 1, 1, 0, 0);
    b[1] = cbr(I, "b1b", b[1], 64, 1, 7, 1, 0, 3);
    b[1] = cbr(I, "b1c", b[1], 64, 7, 1, 1, 3, 0);
    b[1] = cbr(I, "b1d", b[1], 96, 3, 3, 1, 0, 0);
    x = nn_concat(n, "concat", b, 2, 1);
    nn_scope(n, "mixed5a");
    b[0] = cbr(I, "conv", x, 192, 3, 3, 2, 0, 0);
    b[1] = nn_pool(n, "pool", x, 1, 3, 2, 0, 0);
    x = nn_concat(n, "concat", b, 2, 1);
    for (int i = 0; i < 4; i++) {
        nn_scope(n, "inception_a%d", i + 1);
        x = incep4_a(I, x);
    }
    nn_scope(n, "reduction_a");
    b[0] = cbr(I, "b0", x, 384, 3, 3, 2, 0, 0);
    b[1] = cbr(I, "b1a", x, 192, 1, 1, 1, 0, 0);
    b[1] = cbr(I, "b1b", b[1], 224, 3, 3, 1, 1, 1);
    b[1] = cbr(I, "b1c", b[1], 256, 3, 3, 2, 0, 0);
    b[2] = nn_pool(n, "pool", x, 1, 3, 2, 0, 0);
    x = nn_concat(n, "concat", b, 3, 1);
    for (int i = 0; i < 7; i++) {
        nn_scope(n, "inception_b%d", i + 1);
        x = incep4_b(I, x);
    }
    nn_scope(n, "reduction_b");
    b[0] = cbr(I, "b0a", x, 192, 1, 1, 1, 0, 0);
    b[0] = cbr(I, "b0b", b[0], 192, 3, 3, 2, 0, 0);
    b[1] = cbr(I, "b1a", x, 256, 1, 1, 1, 0, 0);
    b[1] = cbr(I, "b1b", b[1], 256, 1, 7, 1, 0, 3);
    b[1] = cbr(I, "b1c", b[1], 320, 7, 1, 1, 3, 0);
    b[1] = cbr(I, "b1d", b[1], 320, 3, 3, 2, 0, 0);
    b[2] = nn_pool(n, "pool", x, 1, 3, 2, 0, 0);
    x = nn_concat(n, "concat", b, 3, 1);
    for (int i = 0; i < 3; i++) {
        nn_scope(n, "inception_c%d", i + 1);
        x = incep4_c(I, x);
    }
    return x;
}

static nn_t incep3_a(incep *I, nn_t x, int64_t pool_features)
{
    nn_t b[4];
    b[0] = cbr(I, "b1x1", x, 64, 1, 1, 1, 0, 0);
    b[1] = cbr(I, "b5x5_1", x, 48, 1, 1, 1, 0, 0);
    b[1] = cbr(I, "b5x5_2", b[1], 64, 5, 5, 1, 2, 2);
    b[2] = cbr(I, "b3x3dbl_1", x, 64, 1, 1, 1, 0, 0);
    b[2] = cbr(I, "b3x3dbl_2", b[2], 96, 3, 3, 1, 1, 1);
    b[2] = cbr(I, "b3x3dbl_3", b[2], 96, 3, 3, 1, 1, 1);
    b[3] = nn_pool(I->n, "pool", x, 0, 3, 1, 1, 0);
    b[3] = cbr(I, "bpool", b[3], pool_features, 1, 1, 1, 0, 0);
    return nn_concat(I->n, "concat", b, 4, 1);
}

static nn_t incep3_c(incep *I, nn_t x, int64_t c7)
{
    nn_t b[4];
    b[0] = cbr(I, "b1x1", x, 192, 1, 1, 1, 0, 0);
    b[1] = cbr(I, "b7x7_1", x, c7, 1, 1, 1, 0, 0);
    b[1] = cbr(I, "b7x7_2", b[1], c7, 1, 7, 1, 0, 3);
    b[1] = cbr(I, "b7x7_3", b[1], 192, 7, 1, 1, 3, 0);
    b[2] = cbr(I, "b7x7dbl_1", x, c7, 1, 1, 1, 0, 0);
    b[2] = cbr(I, "b7x7dbl_2", b[2], c7, 7, 1, 1, 3, 0);
    b[2] = cbr(I, "b7x7dbl_3", b[2], c7, 1, 7, 1, 0, 3);
    b[2] = cbr(I, "b7x7dbl_4", b[2], c7, 7, 1, 1, 3, 0);
    b[2] = cbr(I, "b7x7dbl_5", b[2], 192, 1, 7, 1, 0, 3);
    b[3] = nn_pool(I->n, "pool", x, 0, 3, 1, 1, 0);
    b[3] = cbr(I, "bpool", b[3], 192, 1, 1, 1, 0, 0);
    return nn_concat(I->n, "concat", b, 4, 1);
}

static nn_t incep3_e(incep *I, nn_t x)
{
    nn_t b[4], t[2];
    b[0] = cbr(I, "b1x1", x, 320, 1, 1, 1, 0, 0);
    nn_t u = cbr(I, "b3x3_1", x, 384, 1, 1, 1, 0, 0);
    t[0] = cbr(I, "b3x3_2a", u, 384, 1, 3, 1, 0, 1);
    t[1] = cbr(I, "b3x3_2b", u, 384, 3, 1, 1, 1, 0);
    b[1] = nn_concat(I->n, "concat3x3", t, 2, 1);
    u = cbr(I, "b3x3dbl_1", x, 448, 1, 1, 1, 0, 0);
    u = cbr(I, "b3x3dbl_2", u, 384, 3, 3, 1, 1, 1);
    t[0] = cbr(I, "b3x3dbl_3a", u, 384, 1, 3, 1, 0, 1);
    t[1] = cbr(I, "b3x3dbl_3b", u, 384, 3, 1, 1, 1, 0);
    b[2] = nn_concat(I->n, "concat3x3dbl", t, 2, 1);
    b[3] = nn_pool(I->n, "pool", x, 0, 3, 1, 1, 0);
    b[3] = cbr(I, "bpool", b[3], 192, 1, 1, 1, 0, 0);
    return nn_concat(I->n, "concat", b, 4, 1);
}

static nn_t inception_v3(incep *I, nn_t x, int aux, nn_t *aux_out)
{
    nn_net *n = I->n;
    nn_t b[3];
    nn_scope(n, "stem");
    x = cbr(I, "conv1a", x, 32, 3, 3, 2, 0, 0);
    x = cbr(I, "conv2a", x, 32, 3, 3, 1, 0, 0);
    x = cbr(I, "conv2b", x, 64, 3, 3, 1, 1, 1);
    x = nn_pool(n, "pool1", x, 1, 3, 2, 0, 0);
    x = cbr(I, "conv3b", x, 80, 1, 1, 1, 0, 0);
    x = cbr(I, "conv4a", x, 192, 3, 3, 1, 0, 0);
    x = nn_pool(n, "pool2", x, 1, 3, 2, 0, 0);
    static const int64_t pf[3] = {32, 64, 64};
    for (int i = 0; i < 3; i++) {
        nn_scope(n, "mixed5%c", 'b' + i);
        x = incep3_a(I, x, pf[i]);
    }
    nn_scope(n, "mixed6a");
    b[0] = cbr(I, "b3x3", x, 384, 3, 3, 2, 0, 0);
    b[1] = cbr(I, "b3x3dbl_1", x, 64, 1, 1, 1, 0, 0);
    b[1] = cbr(I, "b3x3dbl_2", b[1], 96, 3, 3, 1, 1, 1);
    b[1] = cbr(I, "b3x3dbl_3", b[1], 96, 3, 3, 2, 0, 0);
    b[2] = nn_pool(n, "pool", x, 1, 3, 2, 0, 0);
    x = nn_concat(n, "concat", b, 3, 1);
    static const int64_t c7[4] = {128, 160, 160, 192};
    for (int i = 0; i < 4; i++) {
        nn_scope(n, "mixed6%c", 'b' + i);
        x = incep3_c(I, x, c7[i]);
    }
    if (aux) {
        nn_scope(n, "aux");
        nn_t a = nn_pool(n, "pool", x, 0, 5, 3, 0, 0);
        a = cbr(I, "conv0", a, 128, 1, 1, 1, 0, 0);
        a = cbr(I, "conv1", a, 768, 5, 5, 1, 0, 0);
        *aux_out = a;
    }
    nn_scope(n, "mixed7a");
    b[0] = cbr(I, "b3x3_1", x, 192, 1, 1, 1, 0, 0);
    b[0] = cbr(I, "b3x3_2", b[0], 320, 3, 3, 2, 0, 0);
    b[1] = cbr(I, "b7x7x3_1", x, 192, 1, 1, 1, 0, 0);
    b[1] = cbr(I, "b7x7x3_2", b[1], 192, 1, 7, 1, 0, 3);
    b[1] = cbr(I, "b7x7x3_3", b[1], 192, 7, 1, 1, 3, 0);
    b[1] = cbr(I, "b7x7x3_4", b[1], 192, 3, 3, 2, 0, 0);
    b[2] = nn_pool(n, "pool", x, 1, 3, 2, 0, 0);
    x = nn_concat(n, "concat", b, 3, 1);
    for (int i = 0; i < 2; i++) {
        nn_scope(n, "mixed7%c", 'b' + i);
        x = incep3_e(I, x);
    }
    return x;
}

static int gen_inception(const param_set *ps, const dev_spec *dev, graph_profile **out,
                         sw_err *err)
{
    nn_common c;
    nn_common_get(ps, &c);
    int64_t version = params_int(ps, "version"), image = params_int(ps, "image");
    incep I = {NULL, params_float(ps, "width"), !strcmp(params_str(ps, "relu"), "separate")};
    char name[64];
    if (I.X != 1)
        snprintf(name, sizeof name, "inception-v%lld-%g", (long long)version, I.X);
    else
        snprintf(name, sizeof name, "inception-v%lld", (long long)version);
    nn_net n;
    if (nn_init(&n, name, dev, c.fp16, c.batch))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    I.n = &n;
    nn_t x = image_input(&n, c.batch, 3, image, image), aux = {-1, 0, {0}};
    x = version == 4 ? inception_v4(&I, x) : inception_v3(&I, x, params_bool(ps, "aux"), &aux);
    nn_t loss = head(&n, x, params_int(ps, "classes"), &c);
    if (aux.id >= 0) { /* auxiliary classifier: its loss is added to the main one */
        nn_scope(&n, "aux");
        nn_t a = head(&n, aux, params_int(ps, "classes"), &c);
        if (!c.inference)
            loss = nn_add(&n, "total_loss", loss, a, 0);
    }
    return nn_finish(&n, "inception", ps, loss, &c, out, err);
}

const model_def model_inception = {"inception", "Inception-v4 widened by --width (paper: "
                                   "--width 4 --batch 64); --version 3 for Inception-v3",
                                   inception_params, gen_inception};

/* ---- nasnet (NASNet-A) ---- */

static const param_def nasnet_params[] = {
    {"repeat", PT_INT, "6", "R: normal cells per stack; 3 stacks, so 3R normal cells (paper: "
     "25; NASNet-A large: 6)", NULL, 1, 1e4},
    {"filters", PT_INT, "224", "filters F of the first stack's cells (penultimate layer 24F); "
     "224 reproduces Table 1's memory (NASNet-A large: 168, mobile: 44)", NULL, 4, 1e5},
    {"stem_filters", PT_INT, "96", "filters of the stem convolution", NULL, 1, 1e5},
    {"image", PT_INT, "331", "input height and width", NULL, 32, 1e5},
    {"width", PT_FLOAT, "1", "multiplier of --filters and --stem-filters", NULL, 0.01, 1e3},
    {"classes", PT_INT, "1000", "classes", NULL, 1, 1e7},
    COMMON_PARAMS("64"),
    PARAM_END};

/* NASNet-A cells (Zoph et al. 2018; the TF-slim definition): per block, the
   operation applied to each of two hidden states, then their sum. */
typedef struct nas_cell_def {
    const char *ops[10];
    int idx[10];
    int used[7];
} nas_cell_def;

static const nas_cell_def nas_normal = {
    {"sep5", "sep3", "sep5", "sep3", "avg3", "none", "avg3", "avg3", "sep3", "none"},
    {0, 1, 1, 1, 0, 1, 1, 1, 0, 0},
    {1, 0, 0, 0, 0, 0, 0}};
static const nas_cell_def nas_reduction = {
    {"sep5", "sep7", "max3", "sep7", "avg3", "sep5", "none", "avg3", "sep3", "max3"},
    {0, 1, 0, 1, 0, 1, 3, 2, 2, 0},
    {1, 1, 1, 0, 0, 0, 0}};

static int same_hw(nn_t a, nn_t b) { return a.d[2] == b.d[2] && a.d[3] == b.d[3]; }

/* two half-width 1x1 convolutions on stride-2 subsamplings, concatenated */
static nn_t factorized_reduction(nn_net *n, const char *name, nn_t x, int64_t k)
{
    char nm[64];
    nn_t p[2];
    for (int i = 0; i < 2; i++) {
        snprintf(nm, sizeof nm, "%s.path%d.pool", name, i + 1);
        p[i] = nn_pool(n, nm, x, 0, 1, 2, 0, NN_PRE_RELU);
        snprintf(nm, sizeof nm, "%s.path%d.conv", name, i + 1);
        p[i] = nn_convs(n, nm, p[i], k / 2 + (i ? k % 2 : 0), 1, 1, i ? NN_BN : 0);
    }
    snprintf(nm, sizeof nm, "%s.concat", name);
    return nn_concat(n, nm, p, 2, 1);
}

static nn_t nas_op(nn_net *n, const char *name, const char *op, nn_t h, int stride, int64_t F)
{
    if (op[0] == 's') { /* sepR_2: (ReLU, separable conv, BN) twice */
        int r = op[3] - '0';
        char nm[64];
        snprintf(nm, sizeof nm, "%s.sep1", name);
        h = nn_sepconv(n, nm, h, F, r, stride, NN_PRE_RELU | NN_BN);
        snprintf(nm, sizeof nm, "%s.sep2", name);
        return nn_sepconv(n, nm, h, F, r, 1, NN_PRE_RELU | NN_BN);
    }
    if (op[0] == 'n') { /* identity, or a 1x1 projection when the shape changes */
        if (stride == 1 && h.d[1] == F)
            return h;
        return nn_convs(n, name, h, F, 1, stride, NN_PRE_RELU | NN_BN);
    }
    h = nn_pool(n, name, h, op[0] == 'm', 3, stride, 1, 0);
    if (h.d[1] != F) {
        char nm[64];
        snprintf(nm, sizeof nm, "%s.proj", name);
        h = nn_convs(n, nm, h, F, 1, 1, NN_BN);
    }
    return h;
}

static nn_t nas_cell(nn_net *n, const nas_cell_def *def, nn_t x, nn_t prev, int64_t F, int stride)
{
    /* cell base: bring the previous-previous output to this cell's shape */
    if (prev.id < 0)
        prev = x;
    else if (!same_hw(prev, x))
        prev = factorized_reduction(n, "prev_reduce", prev, F);
    else if (prev.d[1] != F)
        prev = nn_convs(n, "prev_proj", prev, F, 1, 1, NN_PRE_RELU | NN_BN);
    nn_t h[7];
    h[0] = prev;
    h[1] = nn_convs(n, "base", x, F, 1, 1, NN_PRE_RELU | NN_BN);
    for (int b = 0; b < 5; b++) {
        nn_t side[2];
        for (int k = 0; k < 2; k++) {
            int i = 2 * b + k, src = def->idx[i];
            char nm[32];
            snprintf(nm, sizeof nm, "block%d.%s%d", b + 1, def->ops[i], k);
            side[k] = nas_op(n, nm, def->ops[i], h[src], src < 2 ? stride : 1, F);
        }
        char nm[32];
        snprintf(nm, sizeof nm, "block%d.add", b + 1);
        h[2 + b] = nn_add(n, nm, side[0], side[1], 0);
    }
    nn_t cat[7];
    int k = 0;
    for (int i = 0; i < 7; i++) {
        if (def->used[i])
            continue;
        if (!same_hw(h[i], h[6])) {
            char nm[32];
            snprintf(nm, sizeof nm, "reduce%d", i);
            h[i] = factorized_reduction(n, nm, h[i], h[6].d[1]);
        }
        cat[k++] = h[i];
    }
    return nn_concat(n, "concat", cat, k, 1);
}

static int gen_nasnet(const param_set *ps, const dev_spec *dev, graph_profile **out, sw_err *err)
{
    nn_common c;
    nn_common_get(ps, &c);
    int64_t R = params_int(ps, "repeat");
    double X = params_float(ps, "width");
    int64_t F = scaled(params_int(ps, "filters"), X);
    int64_t image = params_int(ps, "image");
    char name[64];
    snprintf(name, sizeof name, "nasnet-%lld", (long long)R);
    nn_net n;
    if (nn_init(&n, name, dev, c.fp16, c.batch))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    nn_t x = image_input(&n, c.batch, 3, image, image);
    nn_scope(&n, "stem");
    x = nn_conv(&n, "conv", x, scaled(params_int(ps, "stem_filters"), X), 3, 3, 2, 0, 0, 1, NN_BN);
    nn_t prev = {-1, 0, {0}};
    /* two stem reduction cells at F/4 and F/2 filters, then 3 stacks of R
       normal cells with a reduction cell (filters doubled) between stacks */
    for (int s = 0; s < 2; s++) {
        nn_scope(&n, "stem_cell%d", s);
        nn_t y = nas_cell(&n, &nas_reduction, x, prev, F >> (2 - s), 2);
        prev = x;
        x = y;
    }
    int64_t filters = F;
    for (int64_t i = 0; i < 3 * R; i++) {
        if (i > 0 && i % R == 0) {
            filters *= 2;
            nn_scope(&n, "reduction_cell%lld", (long long)(i / R));
            nn_t y = nas_cell(&n, &nas_reduction, x, prev, filters, 2);
            prev = x;
            x = y;
        }
        nn_scope(&n, "cell%lld", (long long)i);
        nn_t y = nas_cell(&n, &nas_normal, x, prev, filters, 1);
        prev = x;
        x = y;
    }
    nn_scope(&n, "head");
    x = nn_unary(&n, "relu", "relu", x, 1);
    nn_t loss = head(&n, x, params_int(ps, "classes"), &c);
    return nn_finish(&n, "nasnet", ps, loss, &c, out, err);
}

const model_def model_nasnet = {"nasnet", "NASNet-A with 3R normal cells (paper: --repeat 25 "
                                "--batch 64)", nasnet_params, gen_nasnet};

/* ---- densenet ---- */

static const param_def densenet_params[] = {
    {"depth", PT_INT, "121", "121, 169 or 201", NULL, 121, 201},
    {"growth", PT_INT, "32", "growth rate (channels each layer adds)", NULL, 1, 1e5},
    {"width", PT_FLOAT, "1", "multiplier of the growth rate and stem channels", NULL, 0.01, 1e3},
    {"image", PT_INT, "224", "input height and width", NULL, 32, 1e5},
    {"classes", PT_INT, "1000", "classes", NULL, 1, 1e7},
    COMMON_PARAMS("32"),
    PARAM_END};

static int gen_densenet(const param_set *ps, const dev_spec *dev, graph_profile **out,
                        sw_err *err)
{
    nn_common c;
    nn_common_get(ps, &c);
    int64_t depth = params_int(ps, "depth");
    static const int cfg[][5] = {{121, 6, 12, 24, 16}, {169, 6, 12, 32, 32}, {201, 6, 12, 48, 32}};
    int which = -1;
    for (int i = 0; i < 3; i++)
        if (cfg[i][0] == depth)
            which = i;
    if (which < 0)
        return sw_fail(err, SW_EINVAL, "model densenet: depth %lld is not one of 121, 169, 201",
                       (long long)depth);
    double X = params_float(ps, "width");
    int64_t growth = scaled(params_int(ps, "growth"), X), image = params_int(ps, "image");
    char name[64];
    snprintf(name, sizeof name, "densenet-%lld", (long long)depth);
    nn_net n;
    if (nn_init(&n, name, dev, c.fp16, c.batch))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    nn_t x = image_input(&n, c.batch, 3, image, image);
    nn_scope(&n, "stem");
    x = nn_convs(&n, "conv", x, 2 * growth, 7, 2, NN_BN | NN_RELU);
    x = nn_pool(&n, "pool", x, 1, 3, 2, 1, 0);
    nn_t feats[64];
    for (int b = 0; b < 4; b++) {
        int nf = 0;
        feats[nf++] = x;
        for (int l = 0; l < cfg[which][b + 1]; l++) {
            nn_scope(&n, "block%d.layer%d", b + 1, l + 1);
            /* torchvision concatenates every earlier feature map per layer */
            nn_t in = nf > 1 ? nn_concat(&n, "concat", feats, nf, 1) : feats[0];
            nn_t y = nn_convs(&n, "conv1", in, 4 * growth, 1, 1, NN_PRE_BN);
            y = nn_convs(&n, "conv2", y, growth, 3, 1, NN_PRE_BN);
            feats[nf++] = y; /* at most 1 + 48 (DenseNet-201) */
        }
        nn_scope(&n, "block%d", b + 1);
        x = nn_concat(&n, "concat", feats, nf, 1);
        if (b < 3) {
            nn_scope(&n, "transition%d", b + 1);
            x = nn_convs(&n, "conv", x, x.d[1] / 2, 1, 1, NN_PRE_BN);
            x = nn_pool(&n, "pool", x, 0, 2, 2, 0, 0);
        }
    }
    nn_scope(&n, "final");
    x = nn_bn(&n, "norm", x, 1);
    nn_t loss = head(&n, x, params_int(ps, "classes"), &c);
    return nn_finish(&n, "densenet", ps, loss, &c, out, err);
}

const model_def model_densenet = {"densenet", "DenseNet-BC (121 default; DTR's run: --batch 84 "
                                  "--device titanv)", densenet_params, gen_densenet};

/* ---- unet ---- */

static const param_def unet_params[] = {
    {"image_h", PT_INT, "416", "input height (a multiple of 16)", NULL, 16, 1e5},
    {"image_w", PT_INT, "608", "input width (a multiple of 16)", NULL, 16, 1e5},
    {"width", PT_FLOAT, "1", "channel multiplier (64 channels at the top level)", NULL, 0.01,
     1e3},
    {"classes", PT_INT, "1", "output channels (per-pixel classes)", NULL, 1, 1e5},
    COMMON_PARAMS("6"),
    PARAM_END};

static nn_t double_conv(nn_net *n, nn_t x, int64_t mid, int64_t outc)
{
    x = nn_convs(n, "conv1", x, mid, 3, 1, NN_BN | NN_RELU);
    return nn_convs(n, "conv2", x, outc, 3, 1, NN_BN | NN_RELU);
}

static int gen_unet(const param_set *ps, const dev_spec *dev, graph_profile **out, sw_err *err)
{
    nn_common c;
    nn_common_get(ps, &c);
    int64_t H = params_int(ps, "image_h"), W = params_int(ps, "image_w");
    if (H % 16 || W % 16)
        return sw_fail(err, SW_EINVAL, "model unet: --image-h and --image-w must be multiples of "
                       "16 (got %lldx%lld)", (long long)H, (long long)W);
    double X = params_float(ps, "width");
    nn_net n;
    if (nn_init(&n, "unet", dev, c.fp16, c.batch))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    /* Ronneberger et al. 2015 with bilinear upsampling (the milesial
       Pytorch-UNet DTR ran): 4 levels down, 4 up, skip concatenations */
    nn_t x = image_input(&n, c.batch, 3, H, W), skip[5];
    int64_t ch[5] = {64, 128, 256, 512, 512};
    nn_scope(&n, "inc");
    x = skip[0] = double_conv(&n, x, scaled(ch[0], X), scaled(ch[0], X));
    for (int l = 1; l < 5; l++) {
        nn_scope(&n, "down%d", l);
        x = nn_pool(&n, "pool", x, 1, 2, 2, 0, 0);
        x = skip[l] = double_conv(&n, x, scaled(ch[l], X), scaled(ch[l], X));
    }
    int64_t up_out[4] = {256, 128, 64, 64};
    for (int l = 0; l < 4; l++) {
        nn_scope(&n, "up%d", l + 1);
        nn_t u = nn_upsample(&n, "upsample", x, 2);
        nn_t pair[2] = {skip[3 - l], u};
        x = nn_concat(&n, "concat", pair, 2, 1);
        x = double_conv(&n, x, x.d[1] / 2, scaled(up_out[l], X));
    }
    nn_scope(&n, "outc");
    x = nn_convs(&n, "conv", x, params_int(ps, "classes"), 1, 1, NN_BIAS);
    nn_t loss = x;
    if (!c.inference) {
        int64_t d[2] = {nn_numel(x), 1};
        loss = nn_loss(&n, "loss", nn_view(&n, "flatten", x, 2, d));
    }
    return nn_finish(&n, "unet", ps, loss, &c, out, err);
}

const model_def model_unet = {"unet", "U-Net with bilinear upsampling (DTR's run: --batch 6, "
                              "416x608)", unet_params, gen_unet};

/* ---- shufflenet (v2) ---- */

static const param_def shufflenet_params[] = {
    {"width", PT_FLOAT, "1", "channel multiplier (ShuffleNet v2 1.0x: 116/232/464)", NULL, 0.01,
     1e3},
    {"image", PT_INT, "224", "input height and width", NULL, 32, 1e5},
    {"classes", PT_INT, "1000", "classes", NULL, 1, 1e7},
    COMMON_PARAMS("64"),
    PARAM_END};

static nn_t shuffle_unit(nn_net *n, nn_t x, int64_t outc, int stride)
{
    int64_t half = outc / 2;
    nn_t a, b;
    if (stride == 1) {
        nn_t parts[2];
        nn_split(n, "split", x, 2, 1, parts);
        a = parts[0];
        b = parts[1];
    } else {
        a = nn_conv(n, "b1.dw", x, x.d[1], 3, 3, 2, 1, 1, (int)x.d[1], NN_BN);
        a = nn_convs(n, "b1.pw", a, half, 1, 1, NN_BN | NN_RELU);
        b = x;
    }
    b = nn_convs(n, "b2.pw1", b, half, 1, 1, NN_BN | NN_RELU);
    b = nn_conv(n, "b2.dw", b, half, 3, 3, stride, 1, 1, (int)half, NN_BN);
    b = nn_convs(n, "b2.pw2", b, half, 1, 1, NN_BN | NN_RELU);
    nn_t pair[2] = {a, b};
    nn_t y = nn_concat(n, "concat", pair, 2, 1);
    return nn_copy(n, "shuffle", "channel_shuffle", y, y.nd, y.d);
}

static int gen_shufflenet(const param_set *ps, const dev_spec *dev, graph_profile **out,
                          sw_err *err)
{
    nn_common c;
    nn_common_get(ps, &c);
    double X = params_float(ps, "width");
    int64_t image = params_int(ps, "image");
    nn_net n;
    if (nn_init(&n, "shufflenet-v2", dev, c.fp16, c.batch))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    nn_t x = image_input(&n, c.batch, 3, image, image);
    nn_scope(&n, "stem");
    x = nn_convs(&n, "conv", x, 24, 3, 2, NN_BN | NN_RELU);
    x = nn_pool(&n, "pool", x, 1, 3, 2, 1, 0);
    static const int repeats[3] = {4, 8, 4};
    static const int64_t chans[3] = {116, 232, 464};
    for (int s = 0; s < 3; s++) {
        int64_t oc = scaled(chans[s], X);
        oc += oc % 2;
        for (int u = 0; u < repeats[s]; u++) {
            nn_scope(&n, "stage%d.unit%d", s + 2, u + 1);
            x = shuffle_unit(&n, x, oc, u == 0 ? 2 : 1);
        }
    }
    nn_scope(&n, "conv5");
    x = nn_convs(&n, "conv", x, X > 1.5 ? 2048 : 1024, 1, 1, NN_BN | NN_RELU);
    nn_t loss = head(&n, x, params_int(ps, "classes"), &c);
    return nn_finish(&n, "shufflenet", ps, loss, &c, out, err);
}

const model_def model_shufflenet = {"shufflenet", "ShuffleNet v2 (1.0x; --width scales the "
                                    "stages)", shufflenet_params, gen_shufflenet};

/* ---- vgg ---- */

static const param_def vgg_params[] = {
    {"depth", PT_INT, "16", "11, 13, 16 or 19", NULL, 11, 19},
    {"width", PT_FLOAT, "1", "channel multiplier", NULL, 0.01, 1e3},
    {"image", PT_INT, "224", "input height and width", NULL, 32, 1e5},
    {"classes", PT_INT, "1000", "classes", NULL, 1, 1e7},
    COMMON_PARAMS("64"),
    PARAM_END};

static int gen_vgg(const param_set *ps, const dev_spec *dev, graph_profile **out, sw_err *err)
{
    nn_common c;
    nn_common_get(ps, &c);
    int64_t depth = params_int(ps, "depth");
    static const int convs[][5] = {{11, 1, 1, 2, 2}, {13, 2, 2, 2, 2}, {16, 2, 2, 3, 3},
                                   {19, 2, 2, 4, 4}};
    int which = -1;
    for (int i = 0; i < 4; i++)
        if (convs[i][0] == depth)
            which = i;
    if (which < 0)
        return sw_fail(err, SW_EINVAL, "model vgg: depth %lld is not one of 11, 13, 16, 19",
                       (long long)depth);
    double X = params_float(ps, "width");
    int64_t image = params_int(ps, "image");
    char name[32];
    snprintf(name, sizeof name, "vgg-%lld", (long long)depth);
    nn_net n;
    if (nn_init(&n, name, dev, c.fp16, c.batch))
        return sw_fail(err, SW_ENOMEM, "out of memory");
    nn_t x = image_input(&n, c.batch, 3, image, image);
    static const int64_t ch[5] = {64, 128, 256, 512, 512};
    for (int s = 0; s < 5; s++) {
        int nconv = s < 2 ? convs[which][s + 1] : convs[which][s < 4 ? s + 1 : 4];
        for (int i = 0; i < nconv; i++) {
            nn_scope(&n, "block%d.conv%d", s + 1, i + 1);
            x = nn_convs(&n, "conv", x, scaled(ch[s], X), 3, 1, NN_BIAS | NN_RELU);
        }
        nn_scope(&n, "block%d", s + 1);
        x = nn_pool(&n, "pool", x, 1, 2, 2, 0, 0);
    }
    nn_scope(&n, "classifier");
    int64_t d[2] = {x.d[0], x.d[1] * x.d[2] * x.d[3]};
    x = nn_view(&n, "flatten", x, 2, d);
    for (int i = 0; i < 2; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "fc%d", i + 1);
        x = nn_linear(&n, nm, x, scaled(4096, X), NN_BIAS);
        x = nn_unary(&n, nm, "relu", x, 1);
        x = nn_unary(&n, nm, "dropout", x, 1);
    }
    x = nn_linear(&n, "fc3", x, params_int(ps, "classes"), NN_BIAS);
    nn_t loss = c.inference ? x : nn_loss(&n, "loss", x);
    return nn_finish(&n, "vgg", ps, loss, &c, out, err);
}

const model_def model_vgg = {"vgg", "VGG (16 default; PipeDream's calibration model)", vgg_params,
                             gen_vgg};
