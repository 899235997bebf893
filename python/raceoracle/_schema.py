"""The schema of what a sampler declares (protocol/contract_schema.h): every
field with its kind, group, allowed words and a one-line doc, the stream
names and each stream's versions. It is the binary's own export
(`raceoracle list --json`, key "schema"), kept in the package as
_schema.json so that the package works without a build; CTest
`Schema.PythonPackageMatchesTheBinary` fails when the two differ.

    raceoracle list --json | python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin)['schema'], indent=1))" \\
        > python/raceoracle/_schema.json
"""
import json
import os

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "_schema.json"), encoding="utf-8") as _f:
    SCHEMA = json.load(_f)

#: The allowed words of each word field (and the stream names), the first the default.
WORDS = {f["name"]: tuple(f["words"]) for f in SCHEMA["fields"] if f["kind"] in ("word", "stream_name")}
#: Each stream's newest version: what a declaration without stream_version follows.
LATEST_STREAM_VERSIONS = dict(SCHEMA["latest_stream_versions"])


def drift(exported, packaged):
    """The differences between a binary's exported schema and the package's, as lines ([] when equal)."""
    lines = []
    a = {f["name"]: f for f in exported.get("fields", [])}
    b = {f["name"]: f for f in packaged.get("fields", [])}
    for name in sorted(set(a) | set(b)):
        if name not in b:
            lines.append("%s: in the binary, not in the package" % name)
        elif name not in a:
            lines.append("%s: in the package, not in the binary" % name)
        elif a[name] != b[name]:
            keys = sorted(k for k in set(a[name]) | set(b[name]) if a[name].get(k) != b[name].get(k))
            lines.append("%s: %s differ (binary %s, package %s)" % (
                name, ", ".join(keys), [a[name].get(k) for k in keys], [b[name].get(k) for k in keys]))
    for key in ("stream_versions", "latest_stream_versions"):
        if exported.get(key) != packaged.get(key):
            lines.append("%s differ (binary %s, package %s)" % (key, exported.get(key), packaged.get(key)))
    return lines
