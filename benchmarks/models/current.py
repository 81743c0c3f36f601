"""Architectures deployed today, built offline from configurations with seeded random weights.

From `transformers` (configurations reduced so that a two-core machine exports and runs each in
seconds; the layer structure is the published one):
    llama        Llama decoder: RMSNorm, rotary embeddings, grouped-query attention (8 query heads,
                 2 key/value heads), SwiGLU MLP, causal mask; hidden 256, 2 layers, vocab 2048,
                 64 tokens; output the LM head's logits.
    vit          ViT-style encoder: 16x16 patches of a 224x224 image, class token, learned
                 positions, pre-norm layers with exact GELU; hidden 192, 4 layers, 3 heads
                 (ViT-Tiny's width at a third of its depth); output the last hidden state.
    swin         Swin transformer: 4x4 patches of a 224x224 image, shifted-window attention in
                 7x7 windows (padded to a multiple of the window, rolled, masked), patch merging;
                 embedding 48, two stages of 2 layers (3 and 6 heads); output the last hidden
                 state. Its exports compute the window padding from the input's shape.
    whisper_enc  Whisper encoder: two 1-D convolutions over 80 mel bins, sinusoidal positions,
                 pre-norm layers; d_model 256, 2 layers, 4 heads, 400 frames (200 positions
                 instead of 1500).
    distilbert   DistilBERT: post-norm encoder with an attention mask; dim 256, 2 layers, 4 heads,
                 128 tokens; output the last hidden state.
From torchvision, at full size (weights from torchvision's initializers under a seed, batch norms
randomized and calibrated as in vision.py):
    efficientnet_b0  MBConv blocks with depthwise convolutions, squeeze-and-excitation, SiLU.
    regnet_y_400mf   grouped convolutions, squeeze-and-excitation.
    convnext_tiny    7x7 depthwise convolutions, channels-last LayerNorm, GELU, layer scale.

No weights or tokenizers are downloaded (HF_HUB_OFFLINE is set before transformers is imported).
The transformers get seeded normal weights (std 0.02, as their initializers draw them) and every
norm a seeded scale around 1 and shift around 0, so none is the identity. Attention is the
`eager` implementation: the graph is the explicit softmax(QK^T)V that both exporters trace.
"""

import os

import torch
from torch import nn

os.environ.setdefault("HF_HUB_OFFLINE", "1")

LLAMA_TOKENS = 64
LLAMA_VOCAB = 2048
DISTILBERT_TOKENS = 128
DISTILBERT_VOCAB = 8192
WHISPER_MELS = 80
WHISPER_POSITIONS = 200


def _perturb_norms(model: nn.Module, seed: int) -> nn.Module:
    """Gives every norm (the only 1-D weights) a seeded scale around 1 and biases a seeded shift."""
    generator = torch.Generator().manual_seed(seed + 3)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if parameter.dim() == 1 and name.endswith("weight"):
                parameter.copy_(1.0 + 0.1 * torch.randn(parameter.shape, generator=generator))
            elif name.endswith("bias"):
                parameter.copy_(0.05 * torch.randn(parameter.shape, generator=generator))
    return model.eval()


class _Outputs(nn.Module):
    """Calls a transformers model with keyword inputs and returns the named outputs as a tuple."""

    def __init__(self, model: nn.Module, input_names: tuple, output_names: tuple):
        super().__init__()
        self.model = model
        self.input_names = input_names
        self.output_names = output_names

    def forward(self, *inputs):
        result = self.model(**dict(zip(self.input_names, inputs)), return_dict=True)
        values = tuple(getattr(result, name) for name in self.output_names)
        return values[0] if len(values) == 1 else values


def llama(seed: int) -> nn.Module:
    import transformers
    torch.manual_seed(seed)
    config = transformers.LlamaConfig(
        vocab_size=LLAMA_VOCAB, hidden_size=256, intermediate_size=688, num_hidden_layers=2,
        num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=256,
        rms_norm_eps=1e-5, rope_theta=10000.0, tie_word_embeddings=False, use_cache=False,
        attn_implementation="eager")
    model = transformers.LlamaForCausalLM(config)
    return _Outputs(_perturb_norms(model, seed), ("input_ids", "attention_mask"),
                    ("logits",)).eval()


def llama_inputs(batch: int, seed: int) -> dict:
    """Seeded token ids and an attention mask without padding (a full prompt per row).

    The mask is an input, as in deployment; without it transformers looks for packed sequences
    with torch.diff, which the TorchScript exporter cannot export.
    """
    generator = torch.Generator().manual_seed(seed + 2)
    input_ids = torch.randint(0, LLAMA_VOCAB, (batch, LLAMA_TOKENS), generator=generator)
    return {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}


def vit(seed: int) -> nn.Module:
    import transformers
    torch.manual_seed(seed)
    config = transformers.ViTConfig(
        hidden_size=192, num_hidden_layers=4, num_attention_heads=3, intermediate_size=768,
        image_size=224, patch_size=16, num_channels=3, attn_implementation="eager")
    model = transformers.ViTModel(config, add_pooling_layer=False)
    return _Outputs(_perturb_norms(model, seed), ("pixel_values",), ("last_hidden_state",)).eval()


def swin(seed: int) -> nn.Module:
    import transformers
    torch.manual_seed(seed)
    config = transformers.SwinConfig(
        image_size=224, patch_size=4, num_channels=3, embed_dim=48, depths=[2, 2],
        num_heads=[3, 6], window_size=7, attn_implementation="eager")
    model = transformers.SwinModel(config, add_pooling_layer=False)
    return _Outputs(_perturb_norms(model, seed), ("pixel_values",), ("last_hidden_state",)).eval()


def image_inputs(batch: int, seed: int) -> dict:
    generator = torch.Generator().manual_seed(seed + 2)
    return {"pixel_values": torch.randn((batch, 3, 224, 224), generator=generator)}


def whisper_enc(seed: int) -> nn.Module:
    import transformers
    from transformers.models.whisper.modeling_whisper import WhisperEncoder
    torch.manual_seed(seed)
    config = transformers.WhisperConfig(
        num_mel_bins=WHISPER_MELS, d_model=256, encoder_layers=2, encoder_attention_heads=4,
        encoder_ffn_dim=1024, max_source_positions=WHISPER_POSITIONS,
        attn_implementation="eager")
    model = WhisperEncoder(config)
    return _Outputs(_perturb_norms(model, seed), ("input_features",),
                    ("last_hidden_state",)).eval()


def whisper_inputs(batch: int, seed: int) -> dict:
    """Log-mel-like features: seeded values of unit scale, 2 frames per position."""
    generator = torch.Generator().manual_seed(seed + 2)
    return {"input_features": torch.randn((batch, WHISPER_MELS, 2 * WHISPER_POSITIONS),
                                          generator=generator)}


def distilbert(seed: int) -> nn.Module:
    import transformers
    torch.manual_seed(seed)
    config = transformers.DistilBertConfig(
        vocab_size=DISTILBERT_VOCAB, dim=256, n_layers=2, n_heads=4, hidden_dim=1024,
        max_position_embeddings=512, attn_implementation="eager")
    model = transformers.DistilBertModel(config)
    return _Outputs(_perturb_norms(model, seed), ("input_ids", "attention_mask"),
                    ("last_hidden_state",)).eval()


def distilbert_inputs(batch: int, seed: int) -> dict:
    """Seeded token ids and per-sequence lengths so that the mask pads each row."""
    generator = torch.Generator().manual_seed(seed + 2)
    input_ids = torch.randint(0, DISTILBERT_VOCAB, (batch, DISTILBERT_TOKENS), generator=generator)
    lengths = torch.randint(DISTILBERT_TOKENS // 2, DISTILBERT_TOKENS, (batch,),
                            generator=generator)
    positions = torch.arange(DISTILBERT_TOKENS).unsqueeze(0)
    attention_mask = (positions < lengths.unsqueeze(1)).to(torch.int64)
    return {"input_ids": input_ids, "attention_mask": attention_mask}


def _torchvision(constructor_name: str):
    def build(seed: int) -> nn.Module:
        import torchvision
        import vision
        return vision.build(getattr(torchvision.models, constructor_name), seed)
    return build


efficientnet_b0 = _torchvision("efficientnet_b0")
regnet_y_400mf = _torchvision("regnet_y_400mf")
convnext_tiny = _torchvision("convnext_tiny")


def googlenet(seed: int) -> nn.Module:
    """GoogLeNet (Inception v1) without its training-time auxiliary heads: nine inception blocks
    of four branches each, which do not depend on each other (kiln compile --streams)."""
    import torchvision
    import vision

    def constructor(weights=None):
        return torchvision.models.googlenet(weights=weights, aux_logits=False, init_weights=True)
    return vision.build(constructor, seed)
