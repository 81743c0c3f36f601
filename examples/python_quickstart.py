"""Kiln from Python, as README's quick start shows it: compile examples' tiny CNN for the CPU,
run it on the seeded images, write the probabilities (examples/reference.py checks them).

  python examples/python_quickstart.py MODEL.onnx IMAGE.npy OUT.npy

Needs the kiln package (`pip install .`; scripts/run-example.sh installs it into
build/python-env).
"""
import sys

import numpy as np

import kiln


def main(model_path: str, image_path: str, out_path: str) -> int:
    artifact = kiln.compile(model_path, shapes={"image": (4, 3, 32, 32)})
    print(artifact)
    session = kiln.Session(artifact)
    image = np.load(image_path)
    probs = session.run({"image": image})["probs"]
    np.save(out_path, probs)
    top = probs.argmax(axis=1)
    print(f"kiln {kiln.__version__}: probs {probs.dtype}{list(probs.shape)}, top classes "
          f"{top.tolist()}, rows sum to {np.round(probs.sum(axis=1), 5).tolist()}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
