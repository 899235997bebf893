"""A PEP 517 build backend with the standard library alone, so that
`pip install ./python` works where no package index is reachable: the package
is pure Python, one directory, no build step."""
import base64
import hashlib
import os
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _version():
    """The one place the version is written: raceoracle/_version.py."""
    with open(os.path.join(ROOT, "raceoracle", "_version.py"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("__version__ = "):
                return line.split('"')[1]
    raise RuntimeError("raceoracle/_version.py holds no __version__ line")


NAME, VERSION = "raceoracle", _version()
DIST_INFO = "%s-%s.dist-info" % (NAME, VERSION)
METADATA = """Metadata-Version: 2.1
Name: {0}
Version: {1}
Summary: Check any exponential-race sampler with raceoracle's laws, from Python and pytest
Requires-Python: >=3.9
Requires-Dist: numpy
""".format(NAME, VERSION)
WHEEL = "Wheel-Version: 1.0\nGenerator: raceoracle wheel_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _files():
    pkg = os.path.join(ROOT, NAME)
    for name in sorted(os.listdir(pkg)):
        if name.endswith((".py", ".json")):
            with open(os.path.join(pkg, name), "rb") as f:
                yield NAME + "/" + name, f.read()


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    wheel = "%s-%s-py3-none-any.whl" % (NAME, VERSION)
    entries = list(_files()) + [(DIST_INFO + "/METADATA", METADATA.encode()), (DIST_INFO + "/WHEEL", WHEEL.encode())]
    record = [_record_line(p, d) for p, d in entries] + [DIST_INFO + "/RECORD,,"]
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in entries:
            z.writestr(path, data)
        z.writestr(DIST_INFO + "/RECORD", "\n".join(record) + "\n")
    return wheel


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    import tarfile
    name = "%s-%s" % (NAME, VERSION)
    path = os.path.join(sdist_directory, name + ".tar.gz")
    with tarfile.open(path, "w:gz") as t:
        for rel in ["pyproject.toml", "_build/wheel_backend.py"] + [p for p, _ in _files()]:
            t.add(os.path.join(ROOT, rel), arcname=name + "/" + rel)
        info = tarfile.TarInfo(name + "/PKG-INFO")
        info.size = len(METADATA)
        import io
        t.addfile(info, io.BytesIO(METADATA.encode()))
    return name + ".tar.gz"
