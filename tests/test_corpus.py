"""Corpus readers and writers: every format round-trips; bad files get clear errors."""

import gzip
import os
import re

import numpy as np
import pytest
import scipy.sparse as sp

import mixbayes as mb
from mixbayes.corpus import read_labels

TEXTS = [
    "the cat sat on the mat",
    "dogs and cats and dogs",
    "",  # an empty document is kept
    "the mat was red red red",
]


def _as_dicts(corpus):
    """Each document as {term: count}, independent of vocabulary order."""
    out = []
    for i in range(corpus.n_documents):
        row = corpus.counts[i]
        out.append({corpus.vocabulary[j]: int(c) for j, c in zip(row.indices, row.data)})
    return out


@pytest.fixture
def corpus():
    c, _ = mb.datasets.make_dmm_corpus(25, 15, 2, mean_length=6, random_state=0)
    return c.with_labels([f"class{k}" for k in c.labels])


def test_from_texts_counts_and_options():
    c = mb.Corpus.from_texts(TEXTS)
    assert c.n_documents == 4
    assert _as_dicts(c)[0] == {"the": 2, "cat": 1, "sat": 1, "on": 1, "mat": 1}
    assert _as_dicts(c)[2] == {}
    c = mb.Corpus.from_texts(TEXTS, stop_words="english")
    assert "the" not in set(c.vocabulary)
    c = mb.Corpus.from_texts(TEXTS, min_df=2)
    assert set(c.vocabulary) == {"the", "mat"}
    c = mb.Corpus.from_texts(TEXTS, max_features=2)
    assert c.n_terms == 2
    with pytest.raises(ValueError, match="texts: empty vocabulary"):
        mb.Corpus.from_texts(["the and of", "a an"], stop_words="english")


def test_from_texts_refuses_one_str_and_entries_that_are_not_text():
    with pytest.raises(TypeError, match=r"not one str; wrap a single document as \[text\]"):
        mb.Corpus.from_texts("the cat sat on the mat")
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str .*got NoneType None"):
        mb.Corpus.from_texts(["the cat", None, "the dog"])
    with pytest.raises(TypeError, match=r"texts\[0\] must be a str .*got float nan"):
        mb.Corpus.from_texts([float("nan"), "the dog"])
    assert mb.Corpus.from_texts([b"the cat", "the dog"]).n_documents == 2


def test_mtx_round_trip(tmp_path, corpus):
    corpus.write(tmp_path / "c", format="mtx")
    back = mb.read_corpus(tmp_path / "c" / "counts.mtx")
    assert (back.counts != corpus.counts).nnz == 0
    np.testing.assert_array_equal(back.vocabulary, corpus.vocabulary)
    np.testing.assert_array_equal(back.doc_ids, corpus.doc_ids)
    np.testing.assert_array_equal(back.labels, corpus.labels)
    # the folder itself, and a gzipped matrix, read the same
    assert (mb.read_corpus(tmp_path / "c").counts != corpus.counts).nnz == 0
    with open(tmp_path / "c" / "counts.mtx", "rb") as src, gzip.open(tmp_path / "c" / "counts.mtx.gz", "wb") as dst:
        dst.write(src.read())
    os.remove(tmp_path / "c" / "counts.mtx")
    assert (mb.read_corpus(tmp_path / "c" / "counts.mtx.gz").counts != corpus.counts).nnz == 0


def test_uci_round_trip(tmp_path, corpus):
    corpus.write(tmp_path / "u", format="uci")
    back = mb.read_corpus(tmp_path / "u" / "docword.corpus.txt")
    assert (back.counts != corpus.counts).nnz == 0
    np.testing.assert_array_equal(back.vocabulary, corpus.vocabulary)
    with open(tmp_path / "u" / "docword.corpus.txt", "rb") as src, gzip.open(tmp_path / "u" / "docword.corpus.txt.gz", "wb") as dst:
        dst.write(src.read())
    back = mb.read_corpus(tmp_path / "u" / "docword.corpus.txt.gz")
    assert (back.counts != corpus.counts).nnz == 0


def test_lines_round_trip(tmp_path, corpus):
    path = tmp_path / "docs.txt"
    corpus.write(path, format="lines")
    back = mb.read_corpus(path, token_pattern=r"\S+", lowercase=False)
    assert _as_dicts(back) == _as_dicts(corpus)
    # and a gzipped copy with labels from a file
    with open(path, "rb") as src, gzip.open(tmp_path / "docs.txt.gz", "wb") as dst:
        dst.write(src.read())
    (tmp_path / "gold.txt").write_text("\n".join(map(str, corpus.labels)) + "\n")
    back = mb.read_corpus(tmp_path / "docs.txt.gz", labels=tmp_path / "gold.txt",
                          token_pattern=r"\S+", lowercase=False)
    assert _as_dicts(back) == _as_dicts(corpus)
    np.testing.assert_array_equal(back.labels, corpus.labels)


def test_text_file_folder_and_csv_agree_with_from_texts(tmp_path):
    expected = _as_dicts(mb.Corpus.from_texts(TEXTS))
    (tmp_path / "lines.txt").write_text("\n".join(TEXTS) + "\n")
    assert _as_dicts(mb.read_corpus(tmp_path / "lines.txt")) == expected

    folder = tmp_path / "folder"
    folder.mkdir()
    for i, text in enumerate(TEXTS):
        (folder / f"doc{i}.txt").write_text(text)
    (folder / "labels.txt").write_text("a\nb\nc\nd\n")
    got = mb.read_corpus(folder)
    assert _as_dicts(got) == expected
    assert list(got.doc_ids) == ["doc0", "doc1", "doc2", "doc3"]
    assert list(got.labels) == ["a", "b", "c", "d"]

    import csv

    with open(tmp_path / "docs.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "body", "topic"])
        for i, text in enumerate(TEXTS):
            writer.writerow([f"d{i}", text, i % 2])
    got = mb.read_corpus(tmp_path / "docs.csv", text_column="body", id_column="id",
                         label_column="topic")
    assert _as_dicts(got) == expected
    assert list(got.doc_ids) == ["d0", "d1", "d2", "d3"]
    assert list(got.labels) == ["0", "1", "0", "1"]
    with pytest.raises(ValueError, match="text_column='text' is not a column"):
        mb.read_corpus(tmp_path / "docs.csv")


def test_labels_beside_are_attached_only_when_lengths_match(tmp_path, corpus):
    corpus.write(tmp_path / "c", format="mtx")
    (tmp_path / "c" / "labels.txt").write_text("x\ny\n")  # wrong length: ignored, not an error
    assert mb.read_corpus(tmp_path / "c").labels is None
    with pytest.raises(ValueError, match="labels.txt. holds 2 entries but the input has 25 documents"):
        mb.read_corpus(tmp_path / "c", labels=tmp_path / "c" / "labels.txt")


def test_corpus_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        mb.read_corpus(tmp_path / "missing.mtx")
    (tmp_path / "notes.doc").write_text("x")
    with pytest.raises(ValueError, match="cannot tell the format"):
        mb.read_corpus(tmp_path / "notes.doc")
    (tmp_path / "bad.mtx").write_text("this is not a matrix\n")
    with pytest.raises(ValueError, match="not a readable Matrix Market file"):
        mb.read_corpus(tmp_path / "bad.mtx")
    with pytest.raises(ValueError, match="vocabulary has 2 terms but the count matrix has 3"):
        mb.Corpus(np.ones((2, 3), dtype=int), ["a", "b"])
    with pytest.raises(ValueError, match="doc_ids has 1 entries"):
        mb.Corpus(np.ones((2, 3), dtype=int), ["a", "b", "c"], doc_ids=["x"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="holds no .mtx"):
        mb.read_corpus(empty)
    c = mb.Corpus(np.ones((2, 3), dtype=int), ["a", "b", "c"])
    c.write(tmp_path / "u", format="uci")
    os.remove(tmp_path / "u" / "vocab.corpus.txt")
    with pytest.raises(FileNotFoundError, match="no vocab.corpus.txt"):
        mb.read_corpus(tmp_path / "u" / "docword.corpus.txt")


def test_vocabulary_mismatch_in_files_is_reported(tmp_path, corpus):
    corpus.write(tmp_path / "c", format="mtx")
    (tmp_path / "c" / "vocab.txt").write_text("only\ntwo\n")
    with pytest.raises(ValueError, match="vocabulary has 2 terms but the count matrix has 15"):
        mb.read_corpus(tmp_path / "c")


def test_unreadable_file(tmp_path, monkeypatch):
    path = tmp_path / "secret.txt"
    path.write_text("a b c\n")
    # as root chmod(0) does not stop reading, so deny access the way os.access reports it
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode: False if str(p) == str(path) else real_access(p, mode))
    with pytest.raises(PermissionError, match="cannot read"):
        mb.read_corpus(path)


def test_embedded_classic3():
    c = mb.datasets.load_classic3()
    assert c.counts.shape == (3891, 4303) and c.counts.nnz == 176347
    assert sp.isspmatrix_csr(c.counts) and c.counts.dtype == np.int64
    values, sizes = np.unique(c.labels, return_counts=True)
    assert dict(zip(values, sizes)) == {"CISI": 1460, "CRANFIELD": 1398, "MEDLINE": 1033}


SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data")


@pytest.mark.skipif(not os.path.isdir(SHARED), reason="../shared/data is absent")
@pytest.mark.parametrize("name,shape", [
    ("dblp3", (894, 189)), ("congress109", (529, 1000)), ("classic3", (3891, 4303)),
])
def test_reads_shared_matrix_market_sets(name, shape):
    c = mb.read_corpus(os.path.join(SHARED, name))
    assert c.counts.shape == shape and c.labels is not None


@pytest.mark.skipif(not os.path.isdir(SHARED), reason="../shared/data is absent")
def test_reads_shared_one_document_per_line_sets():
    c = mb.read_corpus(os.path.join(SHARED, "tweet", "docs.txt.gz"), token_pattern=r"\S+")
    assert c.n_documents == 2472 and c.labels is not None


@pytest.mark.parametrize("payload,message", [
    (b"text\x00more text\n", "not a text file (a NUL byte at offset 4)"),
    ("caf\u00e9\n".encode("latin-1"), "not UTF-8 text (byte 0xe9 at offset 3)"),
])
def test_files_that_are_not_text_are_refused(tmp_path, payload, message):
    for name in ("docs.txt", "docs.csv"):
        (tmp_path / name).write_bytes(payload)
        with pytest.raises(ValueError, match=re.escape(message)):
            mb.read_corpus(tmp_path / name)
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.txt").write_bytes(payload)
    with pytest.raises(ValueError, match="a.txt"):
        mb.read_corpus(folder)


@pytest.mark.parametrize("payload,kind", [
    (b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, "a PNG image"),
    (b"%PDF-1.4\n" + b"\x00" * 20, "a PDF document"),
    (b"PK\x03\x04" + b"\x00" * 20, "a zip archive"),
])
def test_binary_files_are_refused_by_what_they_are(tmp_path, payload, kind):
    # "a NUL byte at offset 8" did not say the .csv was an image
    (tmp_path / "docs.csv").write_bytes(payload)
    with pytest.raises(ValueError, match=f"is not a text file: it looks like {kind}"):
        mb.read_corpus(tmp_path / "docs.csv")


def test_gzip_under_another_name_is_read(tmp_path):
    # a gzipped CSV named docs.csv was refused for its NUL bytes
    text = "text\nthe cat sat\nthe dog ate\n"
    (tmp_path / "docs.csv").write_bytes(gzip.compress(text.encode()))
    (tmp_path / "plain.csv").write_text(text)
    gz, plain = mb.read_corpus(tmp_path / "docs.csv"), mb.read_corpus(tmp_path / "plain.csv")
    assert list(gz.vocabulary) == list(plain.vocabulary) and (gz.counts != plain.counts).nnz == 0
    (tmp_path / "cut.csv").write_bytes(gzip.compress(text.encode())[:12])
    with pytest.raises(ValueError, match="cannot read"):
        mb.read_corpus(tmp_path / "cut.csv")


def test_utf8_with_bom_and_gzip_are_read(tmp_path):
    import gzip

    (tmp_path / "bom.txt").write_bytes("\ufeffcafé au lait\nthé vert\n".encode("utf-8"))
    corpus = mb.read_corpus(tmp_path / "bom.txt")
    assert "café" in corpus.vocabulary and corpus.n_documents == 2
    with gzip.open(tmp_path / "docs.txt.gz", "wb") as handle:
        handle.write(b"alpha beta\ngamma delta\n")
    assert mb.read_corpus(tmp_path / "docs.txt.gz").n_documents == 2
    (tmp_path / "fake.txt.gz").write_bytes(b"not gzip at all")
    with pytest.raises(ValueError, match="fake.txt.gz"):
        mb.read_corpus(tmp_path / "fake.txt.gz")


def test_drop_terms():
    corpus = mb.Corpus.from_texts(["the cat and the dog", "the cat sat", "a dog ran and sat"])
    kept = corpus.drop_terms(stop_words="english")
    assert set(kept.vocabulary) == {"cat", "dog", "sat", "ran"}
    assert kept.counts.sum() == 7 and kept.n_documents == 3
    assert set(corpus.drop_terms(min_df=2).vocabulary) == {"and", "cat", "dog", "sat", "the"}
    assert set(corpus.drop_terms(stop_words=["CAT", "the"], min_df=0.5).vocabulary) == {
        "and", "dog", "sat"}
    with pytest.raises(ValueError, match="no terms are left"):
        corpus.drop_terms(min_df=4)
    with pytest.raises(ValueError, match="stop_words must be"):
        corpus.drop_terms(stop_words="french")
    with pytest.raises(ValueError, match="min_df"):
        corpus.drop_terms(min_df=0)


def test_drop_terms_above_a_document_ceiling_and_beyond_max_features():
    """Document frequencies: the 3, and 2, cat 2, dog 2, sat 2, ran 1."""
    corpus = mb.Corpus.from_texts(["the cat and the dog", "the cat sat", "the dog ran and sat"])
    assert set(corpus.drop_terms(max_df=2).vocabulary) == {"and", "cat", "dog", "ran", "sat"}
    assert set(corpus.drop_terms(max_df=0.5).vocabulary) == {"ran"}  # at most 1 of 3
    assert set(corpus.drop_terms(max_df=1.0).vocabulary) == set(corpus.vocabulary)
    # the most widely used terms, ties to the earlier term (alphabetical here)
    assert list(corpus.drop_terms(max_features=3).vocabulary) == ["and", "cat", "the"]
    assert list(corpus.drop_terms(stop_words="english", max_features=2).vocabulary) == [
        "cat", "dog"]
    top = corpus.drop_terms(max_features=3)
    assert top.counts.sum() == 2 + 2 + 4 and top.n_documents == 3
    with pytest.raises(ValueError, match="dropping terms used by fewer than 2 documents and terms used by more"):
        corpus.drop_terms(min_df=2, max_df=1)
    for bad in (0, 1.5, -0.1):
        with pytest.raises(ValueError, match="max_df"):
            corpus.drop_terms(max_df=bad)
    with pytest.raises(TypeError, match="max_df"):
        corpus.drop_terms(max_df="half")
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="max_features"):
            corpus.drop_terms(max_features=bad)


MESSAGE = """From: someone@cs.cmu.edu (Some One)
Subject: Re: Re: space shuttle launch
Organization: Carnegie Mellon
Lines: 3

In article <1993Apr5.1234@nasa.gov>, other@nasa.gov (Other) writes:
> The shuttle t7 0d launched in 1993, see http://www.nasa.gov/x or ftp.nasa.gov
Thanks, mail me at someone@cs.cmu.edu
"""


def test_raw_text_preprocessing_drops_headers_addresses_and_digit_shreds():
    from sklearn.feature_extraction.text import CountVectorizer

    from mixbayes.corpus import raw_text_options, strip_headers

    stripped = strip_headers(MESSAGE)
    assert stripped.startswith("space shuttle launch\nIn article")  # the subject kept
    assert "Organization" not in stripped and "From" not in stripped
    words = set(CountVectorizer(**raw_text_options()).fit([MESSAGE]).get_feature_names_out())
    assert {"space", "shuttle", "launch", "launched", "thanks", "mail"} <= words
    # header fields, addresses, the reply's attribution line and digits are not words
    assert not words & {"organization", "lines", "carnegie", "cmu", "edu", "someone", "re",
                        "article", "writes", "http", "www", "0d", "1993"}
    assert "t7" in words  # a word may hold digits after its first letter (mp3, covid19)
    # text that does not open with a header block is left alone
    for text in ("Note: this is prose.\n\nMore prose.", "one line: no headers",
                 "Dear all,\nSubject: later\n\nbody"):
        assert strip_headers(text) == text


def test_raw_text_contractions_leave_no_fragments_behind_the_stop_list():
    """"don't" split at its apostrophe left "don" (and "ve", "ll", "isn"), which no stop list
    holds; written out, the stop list removes every part (straight and curly apostrophes)."""
    texts = ["I don't think we're done; NASA's probe can't land and won't fly.",
             "They'll see it. I've gone, I'd go, I'm here. It\u2019s fine, isn\u2019t it?",
             "We don't know; you wouldn't say. The rover's wheels."]
    corpus = mb.Corpus.from_texts(texts, **mb.corpus.raw_text_options(), stop_words="english")
    words = set(corpus.vocabulary)
    assert not words & {"don", "ve", "ll", "isn", "wouldn", "won", "ca", "re", "it\u2019s"}
    assert {"nasa", "probe", "land", "fly", "rover", "wheels", "think", "know"} <= words


@pytest.mark.parametrize("text,expected", [
    ("a,b\n1,2\n3,4\n", ","),
    ("a;b\n1;2\n3;4\n", ";"),
    ("a\tb\n1\t2\n3\t4\n", "\t"),
    ("a|b\n1|2\n3|4\n", "|"),
    ("x;y\n0,5;1,25\n2,5;3,75\n", ";"),  # European Excel: decimal commas, with a header
    ("0,5;1,25\n2,5;3,75\n", ";"),  # ... and without one
    ('id,text\n1,"heart; blood"\n2,"wing; air"\n', ","),  # a semicolon inside quoted text
    ("id;text\n1;heart, blood and the lungs\n2;wing, lift\n", ";"),  # commas in prose
    ("label\n0\n1\n", ","),  # one column: nothing to detect
])
def test_delimiter_is_detected(text, expected):
    from mixbayes.corpus import sniff_delimiter

    assert sniff_delimiter(text) == expected


def test_semicolon_csv_of_texts_is_read(tmp_path):
    rows = [f"{i};{text};{i % 2}" for i, text in enumerate(["heart, blood", "wing; air", "cells"])]
    rows[1] = '1;"wing; air";1'
    (tmp_path / "d.csv").write_text("id;text;label\n" + "\n".join(rows) + "\n")
    corpus = mb.read_corpus(tmp_path / "d.csv", id_column="id", label_column="label")
    assert _as_dicts(corpus) == [{"heart": 1, "blood": 1}, {"wing": 1, "air": 1}, {"cells": 1}]
    assert list(corpus.doc_ids) == ["0", "1", "2"] and list(corpus.labels) == ["0", "1", "0"]


@pytest.mark.parametrize("content, message", [
    ("", "is empty"),  # it said "no rows under its header line": there is no header line
    ("\n  \n", "is empty"),
    ("id,text\n", "has no rows under its header line"),
])
def test_empty_csv_and_csv_of_a_header_alone_are_told_apart(tmp_path, content, message):
    (tmp_path / "d.csv").write_text(content)
    with pytest.raises(ValueError, match=message):
        mb.read_corpus(tmp_path / "d.csv")


@pytest.mark.parametrize("content", [
    "label\n1\n2\n1\n",  # a header naming the column
    "class\nb\na\nb\n",
    "gold\n1\n2\n1\n",  # a word above integers
    "id,label\n7,1\n8,2\n9,1\n",  # a table: the label column
    "label;doc\n1;a\n2;b\n1;c\n",
    "doc,label\nx,b\ny,a\nz,b\n",
    "1\n2\n1\n",  # no header
    "7,b\n8,a\n9,b\n",  # two columns, no header: the second
])
def test_labels_files_with_a_header_or_an_id_column(tmp_path, content):
    name = "labels.csv" if "," in content or ";" in content else "labels.txt"
    (tmp_path / name).write_text(content)
    labels = read_labels(tmp_path / name)
    assert len(labels) == 3 and labels[0] == labels[2] != labels[1]
    assert set(labels.tolist()) <= {1, 2, "a", "b"}


def test_labels_of_the_wrong_length_name_both_counts(tmp_path):
    (tmp_path / "docs.txt").write_text("\n".join(TEXTS) + "\n")
    corpus = mb.read_corpus(tmp_path / "docs.txt")
    (tmp_path / "l.txt").write_text("label\n" + "a\n" * 5)
    with pytest.raises(ValueError, match=r"'.*l.txt' holds 5 entries \(after its header row\) "
                                         r"but the input has 4 documents"):
        corpus.with_labels(str(tmp_path / "l.txt"))
    (tmp_path / "l.txt").write_text("a\n" * 5)
    with pytest.raises(ValueError, match="holds 5 entries but the input has 4 documents.*header"):
        mb.read_corpus(tmp_path / "docs.txt", labels=str(tmp_path / "l.txt"))
    (tmp_path / "wide.csv").write_text("a,b,c\n1,2,3\n")
    with pytest.raises(ValueError, match="has 3 columns; name the one holding the labels"):
        read_labels(tmp_path / "wide.csv")


def test_no_terms_left_by_max_df_names_the_share_and_the_way_out():
    # one document: max_df 0.5 allows terms of at most 0 documents; say so, and how to keep them
    corpus = mb.Corpus.from_texts(["hello world"])
    with pytest.raises(ValueError, match=r"more than 0 of the 1 document \(max_df 0\.5; 1\.0 keeps"):
        corpus.drop_terms(max_df=0.5)
