"""tiny_model.py: a user model for tests/test_record_pytorch.c, in the form
record_pytorch.py's FILE.py:FUNC takes. Parameters: encoder 16x32 + 32,
head 32x4 + 4, so (512 + 32 + 128 + 4) * 4 bytes = 2704 bytes in fp32."""
import torch


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Linear(16, 32)
        self.act = torch.nn.ReLU()
        self.head = torch.nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.act(self.encoder(x)))


def tiny(batch, device):
    torch.manual_seed(0)
    return {"model": Tiny(), "inputs": (torch.randn(batch, 16),),
            "target": torch.randint(0, 4, (batch,))}


def broken(batch, device):
    return 42
