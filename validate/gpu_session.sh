#!/bin/bash
# validate/gpu_session.sh: what a lent GPU machine runs, in two calls, for the
# measurements committed under docs/gpu/ and data/pytorch-traces/ (h200_*).
#
#   validate/gpu_session.sh all        both, in one call
#   validate/gpu_session.sh record     the environment, the CUDA backend's
#                                      loader, calibrate-device, traces of the
#                                      zoo's models with memory events, and the
#                                      library checks (profile --dry-run, then
#                                      profile) on three generated models
#   validate/gpu_session.sh fig11      Figure 11, the paper's design, on the GPU,
#                                      one group at a time (APPEND=1)
#
# The machine has no package registry: bin/swapsim, libswapsim_cuda.so (built
# here with -arch=sm_90) and the shared libraries ldd names travel in .gpu/
# (validate/gpu_carry.sh fills it); where the carried CUDA object does not
# load there, it is rebuilt there with that machine's nvcc and the cuDNN of
# its PyTorch wheel. Results go to $OUT (the device tool's folder) as
# tarballs; LIMIT (seconds) bounds the whole call, each step under its own
# share of what is left, so that what finished comes back.
set -u
OUT=${OUT:-out/gpu}
LIMIT=${LIMIT:-280}
REC_S=${REC_S:-150}
LIB_S=${LIB_S:-45}
G=$PWD/.gpu
R=$PWD/out/gpu-session
rm -rf "$R"
mkdir -p "$R"
t0=$(date +%s)
left() { echo $((LIMIT - ($(date +%s) - t0))); }
log() { echo "[$(($(date +%s) - t0))s] $*" | tee -a "$R/session.log"; }

# the CUDA libraries' folders: the toolkit's and the PyTorch wheel's
SITE=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' 2>/dev/null)
libdirs=""
for f in $(find /usr/local/cuda/ /usr/local/cuda/extras "$SITE/nvidia" -maxdepth 4 \
    \( -name 'libcudnn.so.9' -o -name 'libcupti.so.13' -o -name 'libcublas.so.13' \) 2>/dev/null); do
    d=$(dirname "$f")
    case ":$libdirs:" in *":$d:"*) ;; *) libdirs="$libdirs:$d" ;; esac
done
export SWAPSIM_LD="$G/lib$libdirs"
cat >"$G/swapsim.sh" <<EOF
#!/bin/sh
LD_LIBRARY_PATH="$SWAPSIM_LD\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "$G/swapsim" "\$@"
EOF
chmod +x "$G/swapsim.sh"
S=$G/swapsim.sh

rebuild_cuda() {
    cudnn=$(dirname "$(find "$SITE/nvidia" -name cudnn.h 2>/dev/null | head -1)")
    log "rebuilding libswapsim_cuda.so with $(nvcc --version | tail -1) (cuDNN headers: $cudnn)"
    nvcc -std=c++17 -O2 -arch=sm_90 -Xcompiler -fPIC -I"$cudnn" -shared validate/cuda/*.cu \
        -o "$G/libswapsim_cuda.so" -L/usr/local/cuda/lib64 -L"$(dirname "$cudnn")/lib" \
        -lcublas -lcupti -lcudnn >"$R/nvcc.log" 2>&1
}

record() {
    {
        date -u
        nvidia-smi
        nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,pcie.link.gen.max,pcie.link.width.max --format=csv
        nvcc --version | tail -2
        python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())'
        echo "LD for swapsim: $SWAPSIM_LD"
        ldd "$G/libswapsim_cuda.so"
        nproc
    } >"$R/environment.txt" 2>&1
    log "environment: $(nvidia-smi --query-gpu=name --format=csv,noheader)"

    # 1. the loader, then the device's calibration
    if ! timeout 90 "$S" calibrate-device --device-index 0 -o "$R/h200.json" >"$R/calibrate.log" 2>&1; then
        log "calibrate-device failed: $(tail -1 "$R/calibrate.log")"
        rebuild_cuda && timeout 90 "$S" calibrate-device --device-index 0 -o "$R/h200.json" \
            >"$R/calibrate.log" 2>&1
    fi
    log "calibrate-device: $(tail -1 "$R/calibrate.log")"
    timeout 20 "$S" devices "$R/h200.json" >"$R/devices.txt" 2>&1

    # 2. traces of the zoo's models, with the allocator's events
    log "recording (limit ${REC_S}s)"
    PYTHONUNBUFFERED=1 timeout "$REC_S" python3 tools/zoo.py --out "$R/rec" --tag h200 \
        lstm_lm:64 vgg16:64 resnet50:64 llama_small:8 gpt2:8 bert_base:32 vit_b_16:64 \
        mobilenet_v3_large:64 unet:16 gru_lm:64 >"$R/zoo.log" 2>&1
    log "recording: exit $? ($(grep -c ' ms ' "$R/zoo.log") models)"

    # 3. the library checks: every op the dry run puts on a library call is
    # timed as one (docs/validate.md, "What remains to run on a GPU", step 2)
    "$S" model resnet --depth 50 --batch 32 -o "$R/resnet50-b32.json"
    "$S" model inception --width 1 --batch 32 -o "$R/inception1-b32.json"
    "$S" model gpt --layers 2 --batch 4 -o "$R/gpt2l-b4.json"
    lib_end=$(( $(date +%s) + LIB_S ))
    for p in resnet50-b32 inception1-b32 gpt2l-b4; do
        n=$(( lib_end - $(date +%s) ))
        [ "$n" -gt 5 ] || break
        "$S" profile "$R/$p.json" --dry-run >"$R/$p.dryrun.txt" 2>&1
        timeout "$n" "$S" profile "$R/$p.json" --device-index 0 --repeats 3 \
            -o "$R/$p.recorded.json" >"$R/$p.profile.log" 2>&1
        log "profile $p: exit $? $(tail -1 "$R/$p.profile.log")"
    done
    tar cf - -C "$R" rec | split -b 15m - "$OUT/rec.tar.part-"
    tar czf "$OUT/record.tar.gz" -C "$R" --exclude rec --exclude fig11 .
}

fig11() {
    dev=$R/h200.json
    [ -f "$dev" ] || cp docs/gpu/h200.json "$dev" 2>/dev/null || dev=h100
    # the paper's design at the paper's batches, trimmed to fit the lease:
    # 3 individuals of the final population per group (20 generations of 32),
    # 2 measured iterations after 2 warm-ups, a 1-iteration canary pass, ops
    # timed twice; one group per run (APPEND=1), the smaller batches first
    OUT_F=$R/fig11
    for g in inception:32 wresnet:32 inception:64 wresnet:64; do
        n=$(( $(left) - 15 ))
        [ "$n" -gt 20 ] || break
        ib="" wb=""
        case $g in inception:*) ib=${g#*:} ;; *) wb=${g#*:} ;; esac
        log "fig11 $g (limit ${n}s)"
        timeout "$n" env OUT="$OUT_F" APPEND=1 BACKEND=cuda \
            DEVICE_FILE="$dev" DEVICE="$dev" ITERATIONS=2 CANARY_ITERATIONS=1 \
            REPEATS=2 GA_PLANS=3 GENERATIONS=20 POPULATION=32 \
            INCEPTION_BATCHES="$ib" WRESNET_BATCHES="$wb" \
            experiments/fig11.sh "$S" >>"$R/fig11.log" 2>&1
        log "fig11 $g: exit $? ($(($(wc -l <"$OUT_F/fig11.csv") - 1)) plans so far)"
    done
    tar czf "$OUT/fig11.tar.gz" -C "$R" fig11 fig11.log session.log
}

case "${1:-}" in
all) record; fig11 ;;
record) record ;;
fig11) fig11 ;;
*) echo "usage: validate/gpu_session.sh all|record|fig11" >&2; exit 2 ;;
esac
