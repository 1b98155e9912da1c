"""transformer_model.py: a 2-layer transformer encoder with a classification
head, in the form record_pytorch.py's FILE.py:FUNC takes; small enough for
tests/test_apply_plan.c on the CPU (dropout off, so that two runs of one
batch give the same gradients)."""
import torch


class TinyTransformer(torch.nn.Module):
    def __init__(self, vocab=64, d=32, heads=2, ff=64, layers=2, classes=4):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, d)
        layer = torch.nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = torch.nn.Linear(d, classes)

    def forward(self, ids):
        return self.head(self.encoder(self.embed(ids)).mean(dim=1))


def transformer(batch, device):
    torch.manual_seed(0)
    return {"model": TinyTransformer(), "inputs": (torch.randint(0, 64, (batch, 32)),),
            "target": torch.randint(0, 4, (batch,))}
