"""Raw text as people write it, made ready for the tokeniser: a leading block of e-mail or news
headers dropped (the subject kept), e-mail and web addresses and the attribution lines of quoted
replies removed, and words that start with a letter (what the command line reads raw text with;
:mod:`mixbayes.corpus` offers :func:`raw_text_options` and :func:`strip_headers`)."""

from __future__ import annotations

import re

WORD_PATTERN = r"(?u)\b[^\W\d_]\w+\b"
"""Words of raw text: two or more word characters, the first a letter ("mp3" and "covid19"
are words; scikit-learn's default pattern also keeps "1993", "0d" and "3d0", numbers and the
shreds of encoded attachments)."""

_HEADER_LINE = re.compile(r"^[A-Za-z][A-Za-z0-9-]*:")
_REPLY = re.compile(r"^(\s*(re|fwd?|aw)\s*:)+", re.IGNORECASE)


def strip_headers(text):
    r"""``text`` without a leading block of e-mail or news headers, keeping the subject.

    A block is two or more lines ``Name: value`` (continuation lines start with white space)
    ended by a blank line, as RFC 5322 messages begin; ordinary text rarely starts so. The
    words of ``Subject:`` are kept (a message's subject is about its topic, its ``From:``,
    ``Path:`` and ``Organization:`` are not: left in, "edu", "subject", "lines" and
    "organization" topped every cluster of 20 Newsgroups). Text without such a block is
    returned unchanged.
    """
    head, blank, body = text.partition("\n\n")
    if not blank:
        head, blank, body = text.partition("\r\n\r\n")
    lines = head.splitlines()
    fields = [line for line in lines if line and not line[0].isspace()]
    if not blank or len(fields) < 2 or not all(_HEADER_LINE.match(f) for f in fields):
        return text
    subject = [_REPLY.sub("", line.split(":", 1)[1]).strip() for line in fields
               if line.lower().startswith("subject:")]
    return "\n".join(subject + [body])


_ADDRESSES = re.compile(r"\S+@\S+|(?:https?|ftp)://\S+|www\.\S+", re.IGNORECASE)
_ATTRIBUTION = re.compile(r"^.*\b(?:writes|wrote)\s*:\s*$", re.IGNORECASE | re.MULTILINE)


# English contractions, written out so that the stop list removes their parts: split at the
# apostrophe, "don't" left the word "don" (the "t" is too short to be a word), which no stop
# list holds and which stood among the top ten words of 8 of the 12 largest clusters of 20
# Newsgroups; "can't" and "won't" first, whose stems change
_CONTRACTIONS = ((re.compile(r"\bcan[\'\u2019]t\b"), "cannot"),
                 (re.compile(r"\bwon[\'\u2019]t\b"), "will not"),
                 (re.compile(r"n[\'\u2019]t\b"), " not"),
                 (re.compile(r"[\'\u2019](?:re)\b"), " are"),
                 (re.compile(r"[\'\u2019](?:ve)\b"), " have"),
                 (re.compile(r"[\'\u2019](?:ll)\b"), " will"),
                 (re.compile(r"[\'\u2019](?:m)\b"), " am"),
                 (re.compile(r"[\'\u2019](?:d)\b"), " would"),
                 (re.compile(r"[\'\u2019]s\b"), ""))


def expand_contractions(text):
    """``text`` (lower case) with English contractions written out: "don't" -> "do not",
    "we're" -> "we are", "it's" -> "it", "can't" -> "cannot" (a possessive "'s" is dropped
    too: "nasa's" -> "nasa")."""
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return text


def raw_text_preprocessor(text):
    """The preprocessing of raw text :func:`raw_text_options` names: headers stripped
    (:func:`strip_headers`), e-mail addresses, web addresses and the attribution lines of
    quoted replies ("In article <...>, someone@host writes:") removed, lower-cased, and
    contractions written out (:func:`expand_contractions`). (Left in, "com" and "article"
    were among the top words of 17 of 20 clusters of 20 Newsgroups.)"""
    text = _ADDRESSES.sub(" ", _ATTRIBUTION.sub(" ", strip_headers(text))).lower()
    return expand_contractions(text)


def raw_text_options():
    """``CountVectorizer`` options for raw text as people write it (what the command line
    uses): e-mail/news headers dropped, words that start with a letter (:data:`WORD_PATTERN`)."""
    return dict(preprocessor=raw_text_preprocessor, token_pattern=WORD_PATTERN)
