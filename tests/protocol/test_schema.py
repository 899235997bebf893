"""The Python package's words are the binary's exported schema (protocol/contract_schema.h,
python/raceoracle/_schema.json): equal here, and a change to either is seen."""
import copy
import json
import os
import subprocess

import pytest

from raceoracle import _schema, _serve, streams


def exported():
    out = subprocess.run([os.environ["RACEORACLE_BIN"], "list", "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["schema"]


def test_the_package_schema_is_the_binarys():
    assert _schema.drift(exported(), _schema.SCHEMA) == []


def test_a_changed_word_is_seen():
    changed = copy.deepcopy(_schema.SCHEMA)
    field = next(f for f in changed["fields"] if f["name"] == "greedy_rule")
    field["words"][1] = "zero_only"
    lines = _schema.drift(exported(), changed)
    assert len(lines) == 1 and lines[0].startswith("greedy_rule: words differ"), lines
    changed["latest_stream_versions"]["flashinfer-curand"] = 1
    assert any(line.startswith("latest_stream_versions differ") for line in _schema.drift(exported(), changed))


def test_the_package_words_come_from_the_schema():
    # Every word the schema allows is accepted by contract_fields, and a word it does not know is refused.
    assert _serve._CONVENTION_WORDS is _schema.WORDS
    assert streams.STREAMS == _schema.WORDS["noise_stream"]
    for name, words in _schema.WORDS.items():
        for w in words:
            assert _serve.contract_fields(**{name: w})[name] == w
        with pytest.raises(ValueError, match="%s must be one of" % name):
            _serve.contract_fields(**{name: "no-such-word"})


def test_the_protocol_doc_has_a_row_for_every_field_with_its_words():
    doc = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "SAMPLER_PROTOCOL.md")).read()
    rows = [line for line in doc.splitlines() if line.startswith("| `")]
    for f in exported()["fields"]:
        row = next((r for r in rows if "`%s`" % f["name"] in r.split("|")[1]), None)
        assert row is not None, "docs/SAMPLER_PROTOCOL.md has no row for %s" % f["name"]
        for w in f["words"]:
            assert "`%s`" % w in row, "docs/SAMPLER_PROTOCOL.md: the row of %s does not name %r" % (f["name"], w)
