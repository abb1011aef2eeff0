"""A hosted bot's upload: checked when it arrives (``check``) and unpacked where a worker
runs it (``unpack``).  Pure functions over bytes and one folder; no Flask, no database.

An upload is a single Python file (``text/x-python``, becoming ``bot.py``) or a zip
(``application/zip``) with ``bot.py`` at its root.  Both are bounded: ``MAX_UPLOAD``
bytes as sent, ``MAX_FILES`` files and ``MAX_UNPACKED`` bytes once unpacked (a zip bomb
is refused from its directory, and each member is read no further than it said it was),
and a zip member may not be a link, a device, an absolute path or a path with ``..``
(a zip slip).  Every refusal is a ``BundleError`` whose text says what to change.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import stat
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

PYTHON = "text/x-python"
ZIP = "application/zip"
MEDIA_TYPES = (PYTHON, ZIP)
MAX_UPLOAD = 1024 * 1024  # bytes as sent
MAX_FILES = 200
MAX_UNPACKED = 10 * 1024 * 1024  # bytes of all files once unpacked
BOT_FILE = "bot.py"
VERSION_DIGITS = 12  # a version is the first digits of the upload's SHA-256


class BundleError(ValueError):
    """An upload the arena refuses, and why, for its author."""


@dataclass(frozen=True)
class Bundle:
    """A checked upload: its bytes, media type, hash, version and file count."""

    data: bytes
    media_type: str
    sha256: str
    files: int

    @property
    def version(self) -> str:
        return self.sha256[:VERSION_DIGITS]


def media_type(content_type: str | None) -> str:
    """The upload's media type from a Content-Type header (parameters dropped)."""
    kind = (content_type or "").split(";", 1)[0].strip().lower()
    if kind in ("text/x-python", "text/x-script.python", "application/x-python-code"):
        return PYTHON
    if kind in ("application/zip", "application/x-zip-compressed"):
        return ZIP
    raise BundleError(
        f"send the code as text/x-python (one file, bot.py) or application/zip (bot.py at "
        f"its root), not {kind or 'no Content-Type'}"
    )


def check(data: bytes, content_type: str | None) -> Bundle:
    """The upload as a ``Bundle``, or ``BundleError`` saying what is wrong with it."""
    kind = media_type(content_type)
    if not data:
        raise BundleError("the upload is empty")
    if len(data) > MAX_UPLOAD:
        raise BundleError(f"the upload is {len(data)} bytes; at most {MAX_UPLOAD} are taken")
    if kind == PYTHON:
        _python_text(data, BOT_FILE)
        files = 1
    else:
        with _opened(data) as archive:
            files = len(_members(archive))
    return Bundle(data, kind, hashlib.sha256(data).hexdigest(), files)


def _python_text(data: bytes, name: str) -> None:
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BundleError(f"{name} is not UTF-8 text") from None
    try:
        compile(source, name, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise BundleError(f"{name}, line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:  # a NUL byte
        raise BundleError(f"{name}: {exc}") from None


def _opened(data: bytes) -> zipfile.ZipFile:
    """The upload as a zip, or ``BundleError`` when it is not one."""
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise BundleError(f"not a zip file: {exc}") from None


def _members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The zip's file members, each checked; the zip refused as a whole if any is not."""
    infos = archive.infolist()
    files = [i for i in infos if not i.is_dir()]
    if len(infos) > MAX_FILES * 2 or len(files) > MAX_FILES:
        raise BundleError(f"the zip has {len(files)} files; at most {MAX_FILES} are taken")
    total = 0
    bot = None
    for info in infos:
        _safe_name(info)
        total += info.file_size
        if _relative(info.filename) == PurePosixPath(BOT_FILE):
            bot = info
    if total > MAX_UNPACKED:
        raise BundleError(f"the zip unpacks to {total} bytes; at most {MAX_UNPACKED} are taken")
    if bot is None:
        raise BundleError(
            f"the zip has no {BOT_FILE} at its root (zip the files, not their folder)"
        )
    try:
        _python_text(_read(archive, bot), BOT_FILE)
    except (zipfile.BadZipFile, OSError, RuntimeError) as exc:
        raise BundleError(f"{BOT_FILE} cannot be read from the zip: {exc}") from None
    return files


def _relative(name: str) -> PurePosixPath:
    return PurePosixPath(*[p for p in PurePosixPath(name.replace("\\", "/")).parts if p != "."])


def _safe_name(info: zipfile.ZipInfo) -> None:
    """A member that stays in the folder and is a plain file or folder."""
    name = info.filename.replace("\\", "/")
    parts = PurePosixPath(name).parts
    if name.startswith("/") or (parts and ":" in parts[0]) or ".." in parts or not parts:
        raise BundleError(f"the zip's member {info.filename!r} points outside its folder")
    mode = info.external_attr >> 16
    if stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise BundleError(f"the zip's member {info.filename!r} is a link or a special file")
    if info.flag_bits & 0x1:
        raise BundleError(f"the zip's member {info.filename!r} is encrypted")


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, read no further than the size the zip declares for it (the size
    is what was checked against MAX_UNPACKED)."""
    with archive.open(info) as member:
        data = member.read(info.file_size + 1)
    if len(data) > info.file_size:
        raise BundleError(f"the zip's member {info.filename!r} is larger than it says")
    return data


def unpack(bundle_data: bytes, media: str, folder: Path) -> None:
    """Write the upload's files into ``folder`` (made, readable by everyone, read-only
    for the sandbox anyway), checking it once more: a worker trusts no stored byte."""
    folder.mkdir(parents=True, exist_ok=True)
    if media == PYTHON:
        _python_text(bundle_data, BOT_FILE)
        (folder / BOT_FILE).write_bytes(bundle_data)
    else:
        with _opened(bundle_data) as archive:
            _members(archive)
            for info in archive.infolist():
                target = folder.joinpath(*_relative(info.filename).parts)
                if not str(target.resolve()).startswith(str(folder.resolve()) + os.sep):
                    raise BundleError(f"the zip's member {info.filename!r} points outside")
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(_read(archive, info))
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def unpacked(root: Path, key: str, load: Callable[[], tuple[bytes, str]]) -> Path:
    """The folder of an upload under ``root`` (``root/<key>``), unpacked once per host
    from what ``load()`` gives (its bytes and media type, read only when the folder is
    not there yet): made in a temporary folder and renamed into place, so that a worker
    never runs a half-written one."""
    target = root / key
    if target.is_dir():
        return target
    data, media = load()
    root.mkdir(parents=True, exist_ok=True)
    os.chmod(root, 0o755)
    work = Path(tempfile.mkdtemp(dir=root, prefix=".unpacking-"))
    try:
        unpack(data, media, work / "code")
        try:
            os.rename(work / "code", target)
        except OSError:
            if not target.is_dir():  # not another worker's that got there first
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target
