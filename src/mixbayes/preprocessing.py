"""How a corpus's text became its counts, as a record that a model file can hold.

A :class:`Preprocessing` names the tokenisation (the JSON-able options of scikit-learn's
``CountVectorizer``, the raw-text preprocessor by its name) and every filter of the terms
applied afterwards, in order (stop words, ``min_df``, ``max_df``, ``max_features``), and, for
a CSV, the column that held the text. :class:`mixbayes.Corpus` keeps one
(:meth:`~mixbayes.Corpus.from_texts` and :meth:`~mixbayes.Corpus.drop_terms` fill it in);
:func:`mixbayes.save` stores it beside the vocabulary, so that new documents can be read as
the fitted ones were (:class:`mixbayes.vocabulary.Vocabulary`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Optional

__all__ = ["Preprocessing"]

# CountVectorizer options kept, with their defaults (others are refused or not about words)
_TOKEN_OPTIONS = {"lowercase": True, "token_pattern": r"(?u)\b\w\w+\b", "strip_accents": None,
                  "ngram_range": (1, 1), "analyzer": "word", "binary": False,
                  "preprocessor": None, "tokenizer": None}
_FILTER_DEFAULTS = {"stop_words": None, "min_df": 1, "max_df": 1.0, "max_features": None}
# preprocessors a file names (a function cannot be stored): name -> "module:function"
_PREPROCESSORS = {"raw_text": ("mixbayes._raw_text", "raw_text_preprocessor")}


def _preprocessor(name):
    import importlib

    module, function = _PREPROCESSORS[name]
    return getattr(importlib.import_module(module), function)


def _name_of(function):
    """The registered name of a preprocessor function, or None."""
    for name in _PREPROCESSORS:
        if function is _preprocessor(name):
            return name
    return None


@dataclass(frozen=True)
class Preprocessing:
    """How text became counts: the tokenisation, then the filters of the terms.

    Attributes
    ----------
    tokens : dict or None
        The ``CountVectorizer`` options that split text into terms (``lowercase``,
        ``token_pattern``, ``strip_accents``, ``ngram_range``, ``analyzer``, ``binary``, and
        ``preprocessor`` by its name, e.g. ``"raw_text"`` for
        :func:`mixbayes._raw_text.raw_text_preprocessor`); None when the counts were read as
        given (a Matrix Market or UCI file).
    filters : tuple of dict
        The filters applied to the terms, in order, each with ``stop_words`` (None,
        ``"english"`` or a list of words), ``min_df``, ``max_df`` and ``max_features``.
    text_column : str or None
        The CSV column that held the text (None for other formats).
    unsaved : tuple of str
        Options that were functions a file cannot hold (a custom ``tokenizer``, say): text
        cannot be read again as it was, and :meth:`vectorizer_options` refuses.
    """

    tokens: Optional[dict] = None
    filters: tuple = ()
    text_column: Optional[str] = None
    unsaved: tuple = field(default=())

    # ------------------------------------------------------------------ construction
    @classmethod
    def of_vectorizer(cls, vectorizer):
        """The record of a ``CountVectorizer``'s options: its tokenisation, and its stop
        words and document-frequency limits as the first filter (when any is set)."""
        params = vectorizer.get_params()
        tokens, unsaved = {}, []
        for key, default in _TOKEN_OPTIONS.items():
            value = params.get(key, default)
            if key == "preprocessor" and callable(value):
                value = _name_of(value)
                if value is None:
                    unsaved.append(key)
            elif callable(value):
                unsaved.append(key)
                value = None
            if isinstance(value, tuple):
                value = list(value)
            tokens[key] = value
        stop_words = params.get("stop_words")
        if stop_words is not None and not isinstance(stop_words, str):
            stop_words = sorted(str(word) for word in stop_words)
        step = dict(stop_words=stop_words, min_df=params.get("min_df", 1),
                    max_df=params.get("max_df", 1.0), max_features=params.get("max_features"))
        filters = (step,) if step != _FILTER_DEFAULTS else ()
        return cls(tokens, filters, None, tuple(unsaved))

    def filtered(self, stop_words=None, min_df=1, max_df=1.0, max_features=None):
        """This record with one more filter step (as :meth:`mixbayes.Corpus.drop_terms`
        applies it)."""
        if stop_words is not None and not isinstance(stop_words, str):
            stop_words = sorted(str(word) for word in stop_words)
        step = dict(stop_words=stop_words, min_df=min_df, max_df=max_df,
                    max_features=max_features)
        return replace(self, filters=self.filters + (step,))

    def with_text_column(self, name):
        return replace(self, text_column=name)

    # ------------------------------------------------------------------ use
    def vectorizer_options(self):
        """The ``CountVectorizer`` options that split new text into terms as the fitted text
        was (no filters: the vocabulary is the filter).

        Raises
        ------
        ValueError
            When the counts were not made from text here (``tokens`` is None), or a function
            among the options could not be saved.
        """
        if self.unsaved:
            raise ValueError(f"preprocessing: the text was split by a function "
                             f"({', '.join(self.unsaved)}) that a model file cannot hold; "
                             "read the new documents with the same function and map the "
                             "corpus (Vocabulary.map).")
        if self.tokens is None:
            raise ValueError("preprocessing: the counts were read as given (not made from "
                             "text here), so there is no tokenisation to repeat; give new "
                             "text's reading options (Vocabulary.texts(texts, **mixbayes."
                             "corpus.raw_text_options()), or token_pattern=r'\\S+' for "
                             "words already split by spaces), or map a corpus read with them "
                             "(Vocabulary.map).")
        options = dict(self.tokens)
        if options.get("preprocessor") is not None:
            options["preprocessor"] = _preprocessor(options["preprocessor"])
        if isinstance(options.get("ngram_range"), list):
            options["ngram_range"] = tuple(options["ngram_range"])
        return options

    def stop_words(self):
        """Every stop word any filter dropped, lower-cased (a set)."""
        words = set()
        for step in self.filters:
            listed = step.get("stop_words")
            if listed == "english":
                from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as listed
            words |= {str(word).lower() for word in (listed or ())}
        return words

    def describe(self):
        """One line saying what was done (for ``mixbayes inspect``)."""
        parts = []
        if self.tokens is None:
            parts.append("counts read as given")
        else:
            how = "raw text (e-mail headers and addresses stripped)" if self.tokens.get(
                "preprocessor") == "raw_text" else "text"
            pattern = self.tokens.get("token_pattern")
            parts.append(f"{how}, words matching {pattern!r}" + (
                ", lower-cased" if self.tokens.get("lowercase") else ""))
        if self.text_column is not None:
            parts.append(f"CSV column {self.text_column!r}")
        for step in self.filters:
            stop = step.get("stop_words")
            said = [f"stop words {stop}" if isinstance(stop, str) else
                    f"{len(stop)} stop words" if stop else None]
            said += [f"{key} {step[key]}" for key in ("min_df", "max_df", "max_features")
                     if step.get(key) != _FILTER_DEFAULTS[key]]
            said = [s for s in said if s]
            if said:
                parts.append("dropped: " + ", ".join(said))
        if self.unsaved:
            parts.append(f"custom {', '.join(self.unsaved)} (not saved)")
        return "; ".join(parts)

    # ------------------------------------------------------------------ JSON
    def to_dict(self):
        return dict(tokens=self.tokens, filters=[dict(step) for step in self.filters],
                    text_column=self.text_column, unsaved=list(self.unsaved))

    @classmethod
    def from_dict(cls, value):
        """The record of :meth:`to_dict`'s dict, checked.

        Raises
        ------
        ValueError
            Naming what is wrong, when ``value`` is not such a dict.
        """
        if not isinstance(value, dict) or set(value) - {"tokens", "filters", "text_column",
                                                         "unsaved"}:
            raise ValueError(f"preprocessing must be a dict of tokens, filters, text_column "
                             f"and unsaved; got {value!r:.100}.")
        tokens, filters = value.get("tokens"), value.get("filters", [])
        if tokens is not None and (not isinstance(tokens, dict)
                                   or set(tokens) - set(_TOKEN_OPTIONS)):
            raise ValueError(f"preprocessing: tokens must be None or a dict of "
                             f"{sorted(_TOKEN_OPTIONS)}; got {tokens!r:.100}.")
        if tokens is not None and tokens.get("preprocessor") not in (None, *_PREPROCESSORS):
            raise ValueError(f"preprocessing: unknown preprocessor "
                             f"{tokens.get('preprocessor')!r}; known: {sorted(_PREPROCESSORS)}.")
        if not isinstance(filters, list) or not all(
                isinstance(step, dict) and set(step) <= set(_FILTER_DEFAULTS)
                for step in filters):
            raise ValueError(f"preprocessing: filters must be a list of dicts of "
                             f"{sorted(_FILTER_DEFAULTS)}; got {filters!r:.100}.")
        for step in filters:
            stop = step.get("stop_words")
            if not (stop is None or stop == "english" or (
                    isinstance(stop, list) and all(isinstance(w, str) for w in stop))):
                raise ValueError(f"preprocessing: stop_words must be None, 'english' or a "
                                 f"list of words; got {stop!r:.100}.")
        column, unsaved = value.get("text_column"), value.get("unsaved", [])
        if column is not None and not isinstance(column, str):
            raise ValueError(f"preprocessing: text_column must be a string or None; got "
                             f"{column!r}.")
        if not isinstance(unsaved, list) or not all(isinstance(u, str) for u in unsaved):
            raise ValueError(f"preprocessing: unsaved must be a list of option names; got "
                             f"{unsaved!r:.100}.")
        return cls(tokens, tuple(filters), column, tuple(unsaved))
