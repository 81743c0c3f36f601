"""Transformer benchmark models written in plain PyTorch: a BERT-base encoder and a GPT-2-small decoder.

Both follow the published architectures (BERT: post-norm encoder, erf GELU, additive attention mask,
tanh pooler; GPT-2: pre-norm decoder, tanh GELU, causal attention, language-model head tied to the
token embedding). Weights are drawn with a fixed seed in the style of the originals (normal, std
0.02) and layer norms get seeded scales and shifts around (1, 0) so none is the identity.
"""

import math

import torch
from torch import nn
from torch.nn import functional as F

SEQUENCE = 128


class SelfAttention(nn.Module):
    """Multi-head self-attention with one fused QKV projection and an additive score bias."""

    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)

    def forward(self, x: torch.Tensor, score_bias: torch.Tensor) -> torch.Tensor:
        batch, tokens, hidden = x.shape
        qkv = self.qkv(x).reshape(batch, tokens, 3, self.heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each [batch, heads, tokens, head_dim]
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores + score_bias, dim=-1)
        context = torch.matmul(probs, v).transpose(1, 2).reshape(batch, tokens, hidden)
        return self.out(context)


class BertLayer(nn.Module):
    def __init__(self, hidden: int, heads: int, intermediate: int):
        super().__init__()
        self.attention = SelfAttention(hidden, heads)
        self.attention_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.up = nn.Linear(hidden, intermediate)
        self.down = nn.Linear(intermediate, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x: torch.Tensor, score_bias: torch.Tensor) -> torch.Tensor:
        x = self.attention_norm(x + self.attention(x, score_bias))
        return self.output_norm(x + self.down(F.gelu(self.up(x))))


class BertEncoder(nn.Module):
    """BERT-base: token, position and segment embeddings, 12 post-norm layers and the pooler."""

    def __init__(self, vocab=30522, hidden=768, layers=12, heads=12, intermediate=3072,
                 max_positions=512, segments=2):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, hidden)
        self.position_embedding = nn.Embedding(max_positions, hidden)
        self.segment_embedding = nn.Embedding(segments, hidden)
        self.embedding_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(hidden, heads, intermediate) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask, token_type_ids):
        tokens = input_ids.shape[1]
        positions = torch.arange(tokens, dtype=torch.int64, device=input_ids.device).unsqueeze(0)
        x = (self.token_embedding(input_ids) + self.position_embedding(positions)
             + self.segment_embedding(token_type_ids))
        x = self.embedding_norm(x)
        # Padding keys get a large negative score: [batch, 1, 1, tokens], broadcast over heads/queries.
        mask = attention_mask[:, None, None, :].to(x.dtype)
        score_bias = (1.0 - mask) * -10000.0
        for layer in self.layers:
            x = layer(x, score_bias)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


class Gpt2Block(nn.Module):
    def __init__(self, hidden: int, heads: int):
        super().__init__()
        self.attention_norm = nn.LayerNorm(hidden, eps=1e-5)
        self.attention = SelfAttention(hidden, heads)
        self.mlp_norm = nn.LayerNorm(hidden, eps=1e-5)
        self.up = nn.Linear(hidden, 4 * hidden)
        self.down = nn.Linear(4 * hidden, hidden)

    def forward(self, x: torch.Tensor, score_bias: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.attention_norm(x), score_bias)
        return x + self.down(F.gelu(self.up(self.mlp_norm(x)), approximate="tanh"))


class Gpt2Decoder(nn.Module):
    """GPT-2 small: 12 pre-norm blocks with causal attention, a final norm and the tied LM head."""

    def __init__(self, vocab=50257, hidden=768, layers=12, heads=12, max_positions=1024):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, hidden)
        self.position_embedding = nn.Embedding(max_positions, hidden)
        self.blocks = nn.ModuleList(Gpt2Block(hidden, heads) for _ in range(layers))
        self.final_norm = nn.LayerNorm(hidden, eps=1e-5)
        causal = torch.tril(torch.ones(max_positions, max_positions, dtype=torch.bool))
        self.register_buffer("causal", causal, persistent=False)

    def forward(self, input_ids):
        tokens = input_ids.shape[1]
        positions = torch.arange(tokens, dtype=torch.int64, device=input_ids.device).unsqueeze(0)
        x = self.token_embedding(input_ids) + self.position_embedding(positions)
        # Future positions get the most negative finite score, as GPT-2 masks them.
        allowed = self.causal[:tokens, :tokens]
        score_bias = torch.where(allowed, torch.tensor(0.0, dtype=x.dtype),
                                 torch.tensor(torch.finfo(x.dtype).min, dtype=x.dtype))
        for block in self.blocks:
            x = block(x, score_bias)
        return F.linear(self.final_norm(x), self.token_embedding.weight)


def _initialize(model: nn.Module, seed: int) -> nn.Module:
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                module.weight.normal_(0.0, 0.02, generator=generator)
                if isinstance(module, nn.Linear):
                    module.bias.normal_(0.0, 0.02, generator=generator)
            elif isinstance(module, nn.LayerNorm):
                module.weight.copy_(1.0 + 0.1 * torch.randn(module.weight.shape, generator=generator))
                module.bias.copy_(0.05 * torch.randn(module.bias.shape, generator=generator))
    return model.eval()


def bert(seed: int) -> nn.Module:
    return _initialize(BertEncoder(), seed)


def gpt2(seed: int) -> nn.Module:
    return _initialize(Gpt2Decoder(), seed)


def bert_inputs(batch: int, seed: int) -> dict:
    """Seeded token ids, two segments, and per-sequence lengths so that the mask pads each row."""
    generator = torch.Generator().manual_seed(seed + 2)
    input_ids = torch.randint(0, 30522, (batch, SEQUENCE), generator=generator)
    lengths = torch.randint(SEQUENCE // 2, SEQUENCE, (batch,), generator=generator)
    positions = torch.arange(SEQUENCE).unsqueeze(0)
    attention_mask = (positions < lengths.unsqueeze(1)).to(torch.int64)
    token_type_ids = (positions >= (lengths // 2).unsqueeze(1)).to(torch.int64) * attention_mask
    return {"input_ids": input_ids, "attention_mask": attention_mask,
            "token_type_ids": token_type_ids}


def gpt2_inputs(batch: int, seed: int) -> dict:
    generator = torch.Generator().manual_seed(seed + 2)
    return {"input_ids": torch.randint(0, 50257, (batch, SEQUENCE), generator=generator)}
