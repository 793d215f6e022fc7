"""The students of a grading run, from the submissions teachers really have.

Three layouts are recognised in a class folder (docs/classroom.md shows each):

- a folder per student, holding the student's files named as in a workspace (`read-grad.py`);
  a Moodle bulk download's `NAME_ID_assignsubmission_file_` folders are such folders, the
  student named NAME;
- a `.zip` per student (`alice.zip`), its exercise files anywhere inside it;
- an LMS bulk download of loose files: Canvas names them `NAME_ID_SUBMISSION_FILE` (and
  `NAME_LATE_ID_...`, a resubmission's FILE as `read-grad-1.py`), Moodle
  `NAME_ID_assignsubmission_file_FILE`: one student per NAME and ID.

A folder of exercise files with no student in it is one student (`gradtutor grade alice/`).
Anything ambiguous about the class is an error that names it: an exercise file at the top of a
class, an empty class, a student folder or zip that is a link (it could lead to another
student's work). What is wrong with one student's submission costs only that student: a zip
or LMS file that cannot be read (damaged, or not a plain file: a FIFO, a device, a socket) and
a name another submission has too are each that student's problem, said on each of their
exercises, and the rest of the class is graded. Moodle students of one display name are told
apart by their participant id (`Jane Smith_77`), as Canvas files are.

`find_submissions` decides from names alone; `stage` copies the files of zip and loose-file
students into folders of the grader's own, read with the same caps as a learner's file, so the
rest of grading sees a folder per student.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
import zipfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from gradtutor.errors import GradtutorError
from gradtutor.i18n import Msg, msg
from gradtutor.workspace import MAX_FILE_BYTES

# A folder of a Moodle bulk download: the student's name, their participant id, and the
# submission plugin (only `file` submissions hold code).
_MOODLE_FOLDER = re.compile(r"^(?P<who>.+?)_(?P<id>\d+)_assignsubmission_(?P<plugin>[a-z]+)_$")
# A loose file of a Canvas or Moodle bulk download: NAME, an optional LATE, the id, then the
# rest, whose last `_`-part is the file as handed in (Canvas adds -N to a resubmission).
_LMS_FILE = re.compile(r"^(?P<who>[^_]+)_(?:LATE_)?(?P<id>\d+)_(?:.*_)?(?P<file>[^_]+)$")
_RESUBMITTED = re.compile(r"^(?P<stem>.+?)(?:-(?P<n>\d+))?\.py$")
# The most entries a student's zip may list: a course's exercise files and their folders, with
# room to spare; reading a zip's directory costs time and memory by the entry (400,000 took
# seconds and some 200 MB), so the count is read from its end record before anything else.
MAX_ZIP_ENTRIES = 10_000
MAX_ZIP_DIRECTORY = 4 << 20  # bytes: 10,000 entries with names of some 300 characters
_END_RECORD = b"PK\x05\x06"


@dataclass(frozen=True)
class Submission:
    """One student: a name for the reports and the folder holding their exercise files.

    Before `stage`, a zip student has `archive` (their .zip) and a loose-file student `files`
    (exercise file name: the file handed in); `problem` says why none of their files can be
    read (a zip that is not one), which each of their exercises then reports."""

    name: str
    folder: Path
    archive: Path | None = None
    files: tuple[tuple[str, Path], ...] = ()
    problem: Msg | None = None


def shown_name(raw: str) -> str:
    """A file name as reports may show it: bytes that are not UTF-8 (which Python keeps as
    lone surrogates) written as `\\xff`, control and invisible format characters (escape
    sequences, bidi overrides) written out as `\\x1b`, `\\u202e`, so no name can move a
    terminal's cursor, set its title, reorder its line, or break a UTF-8 report."""
    text = raw.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(_written_out(c) if unicodedata.category(c) in _HIDDEN else c
                   for c in text)


_HIDDEN = frozenset({"Cc", "Cf", "Zl", "Zp"})  # control, format, line and paragraph separators


def _written_out(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def find_submissions(paths: Sequence[Path], exercise_ids: Iterable[str]) -> list[Submission]:
    """The students named by `paths` (each a class folder or one student's folder), sorted by
    name; GradtutorError, naming the path, for anything that is not a submission."""
    files = {f"{eid}.py" for eid in exercise_ids}
    found: list[Submission] = []
    for path in paths:
        found.extend(_students_in(path, files))
    return sorted(_named_apart(found), key=lambda s: s.name)


def _named_apart(students: list[Submission]) -> list[Submission]:
    """Students who share a name (`amy/` beside `amy.zip`, or two class folders each with a
    `solo/`) cannot be told apart in a report: each is named by what was handed in, its
    path, and is not graded, its exercises saying why; the rest keep their names."""
    count = Counter(s.name for s in students)
    return [s if count[s.name] == 1 else replace(
                s, name=shown_name(str(_handed_in(s))),
                problem=msg("another submission is also named {name}, so the reports could "
                            "not tell the two apart: rename one", name=s.name))
            for s in students]


def _handed_in(student: Submission) -> Path:
    return student.archive or (student.files[0][1] if student.files else student.folder)


def _students_in(path: Path, files: set[str]) -> list[Submission]:
    if not path.is_dir():
        raise GradtutorError(msg("{path} is not a folder", path=shown_name(str(path))),
                             msg("name a folder of student folders, zips or files, or one "
                                 "student's folder"))
    entries = sorted(child for child in path.iterdir() if not child.name.startswith("."))
    loose = [child for child in entries if child.name in files]
    folders = [child for child in entries if child.is_dir()]
    zips = [child for child in entries if child.suffix.lower() == ".zip"
            and not child.is_dir()]
    lms = _lms_students(path, [c for c in entries if c not in zips and not c.is_dir()
                               and c.name not in files], files)
    # A student's own folder may keep a copy of their work in a folder of its own (`old/`): it
    # takes two folders of work, a zip or an LMS file beside exercise files to make a class
    handed_in = zips or lms or sum(_holds_work(folder, files) for folder in folders) >= 2
    if loose and not handed_in:
        return [Submission(shown_name(_name_of(path)), path)]  # one student's own folder
    if loose:
        raise GradtutorError(
            msg("{file} lies at the top of {path}, beside the students' work",
                file=shown_name(loose[0].name), path=shown_name(str(path))),
            msg("move it into its student's folder, or grade that student's folder alone"))
    if not (folders or zips or lms):
        raise GradtutorError(msg("there is no submission in {path}",
                                 path=shown_name(str(path))),
                             msg("a class folder holds a folder or a .zip per student, or an "
                                 "LMS bulk download (docs/classroom.md)"))
    for entry in [*folders, *zips]:
        if entry.is_symlink():
            raise GradtutorError(
                msg("{entry} is a link, not a student's own folder or zip",
                    entry=shown_name(str(entry))),
                msg("copy the work itself in: a link could lead to another student's"))
    students = _moodle_apart([_folder_student(folder) for folder in folders])
    students += [Submission(shown_name(z.stem), z, archive=z) for z in zips]
    return students + lms


def _holds_work(folder: Path, files: set[str]) -> bool:
    return (_MOODLE_FOLDER.match(folder.name) is not None
            or any((folder / name).exists() for name in files))


def _folder_student(folder: Path) -> tuple[Submission, str | None] | None:
    """The folder's student, with their Moodle participant id (None for a plain folder)."""
    moodle = _MOODLE_FOLDER.match(folder.name)
    if moodle is None:
        return Submission(shown_name(folder.name), folder), None
    if moodle["plugin"] != "file":
        return None  # an online text or comment: no code in it
    return Submission(shown_name(moodle["who"]), folder), moodle["id"]


def _moodle_apart(found: list[tuple[Submission, str | None] | None]) -> list[Submission]:
    """Moodle students of one display name (students may edit their own) named with their
    participant id as well, `Jane Smith_77`: the rule for Canvas files of one NAME."""
    students = [f for f in found if f is not None]
    shared = Counter(s.name for s, moodle_id in students if moodle_id is not None)
    return [replace(s, name=f"{s.name}_{moodle_id}")
            if moodle_id is not None and shared[s.name] > 1 else s
            for s, moodle_id in students]


def _lms_students(path: Path, candidates: list[Path], files: set[str]) -> list[Submission]:
    """Loose files of a bulk download, grouped by student; the latest resubmission of each
    file (Canvas's highest -N) is the one graded."""
    by_student: dict[tuple[str, str], dict[str, tuple[int, Path]]] = {}
    for candidate in candidates:
        match = _LMS_FILE.match(candidate.name)
        if match is None:
            continue
        handed = _RESUBMITTED.match(match["file"])
        if handed is None or f"{handed['stem']}.py" not in files:
            continue
        if candidate.is_symlink():
            raise GradtutorError(
                msg("{entry} is a link, not a student's own file",
                    entry=shown_name(str(candidate))),
                msg("copy the work itself in: a link could lead to another student's"))
        number = int(handed["n"] or 0)
        chosen = by_student.setdefault((match["who"], match["id"]), {})
        name = f"{handed['stem']}.py"
        if name not in chosen or chosen[name][0] < number:
            chosen[name] = (number, candidate)
    who_count = Counter(who for who, _ in by_student)
    return [Submission(shown_name(who if who_count[who] == 1 else f"{who}_{number}"), path,
                       files=tuple(sorted((name, file) for name, (_, file) in chosen.items())))
            for (who, number), chosen in sorted(by_student.items())]


def _name_of(path: Path) -> str:
    return path.resolve().name or str(path)


def stage(students: Sequence[Submission], exercise_ids: Iterable[str],
          root: Path) -> list[Submission]:
    """Each zip or loose-file student as a folder of their exercise files in `root` (a folder
    of the grader's own); folder students as they are. Reads at most the cap of a learner's
    file (plus one byte, so the check reports a file over it), whatever a zip claims."""
    files = {f"{eid}.py" for eid in exercise_ids}
    staged: list[Submission] = []
    for number, student in enumerate(students):
        if student.archive is None and not student.files:
            staged.append(student)
            continue
        folder = root / str(number)
        folder.mkdir()
        problem = (_unzip(student.archive, files, folder) if student.archive is not None
                   else _gather(student.files, folder))
        staged.append(replace(student, folder=folder, archive=None, files=(),
                              problem=problem))
    return staged


class _NotPlain(OSError):
    """A handed-in file that is not a plain file (a FIFO, a device, a socket, a folder)."""


class _TooManyEntries(ValueError):
    """A zip that lists more than MAX_ZIP_ENTRIES entries (or needs ZIP64 to count them)."""


def zip_directory(raw: BinaryIO) -> tuple[int, int] | None:
    """(entries, bytes) of a zip's central directory as its end record gives them (0xFFFF
    and 0xFFFFFFFF: more than a plain zip can count, ZIP64), read from its last 64 KiB;
    None without one. Python's zipfile reads the directory by its size whatever the count
    says, so both are capped."""
    size = raw.seek(0, os.SEEK_END)
    raw.seek(max(0, size - (1 << 16) - 22))
    tail = raw.read()
    at = tail.rfind(_END_RECORD)
    raw.seek(0)
    if at < 0 or len(tail) < at + 16:
        return None
    return (int.from_bytes(tail[at + 10:at + 12], "little"),
            int.from_bytes(tail[at + 12:at + 16], "little"))


def _open_plain(path: Path) -> int:
    """A descriptor open for reading on `path`, only if it is a plain file: anything else is
    refused before it is opened (a FIFO's open would wait for a writer forever, a device's
    may do anything), and again after (it may have been swapped in between), without
    following a link and without waiting."""
    if not stat.S_ISREG(os.lstat(path).st_mode):
        raise _NotPlain
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _NotPlain
    return fd


def _unreadable(path: Path, exc: BaseException) -> Msg:
    if isinstance(exc, _TooManyEntries):
        return msg("{file} lists more than {count} entries, more than a student's work needs, "
                   "so it was not read", file=shown_name(path.name), count=MAX_ZIP_ENTRIES)
    if isinstance(exc, _NotPlain):
        return msg("{file} is not a plain file (a FIFO, a device or a socket, say), so it "
                   "was not read", file=shown_name(path.name))
    return msg("cannot read {file}: {error}", file=shown_name(path.name),
               error=str(getattr(exc, "strerror", None) or exc) or type(exc).__name__)


def _gather(files: tuple[tuple[str, Path], ...], folder: Path) -> Msg | None:
    for name, source in files:
        try:
            with os.fdopen(_open_plain(source), "rb") as handle:
                (folder / name).write_bytes(handle.read(MAX_FILE_BYTES + 1))
        except OSError as exc:
            return _unreadable(source, exc)
    return None


def _unzip(archive: Path, files: set[str], folder: Path) -> Msg | None:
    """The exercise files of a student's zip into `folder`: for each name, the one nearest
    the zip's top (then the first by path); links, folders and encrypted entries are not
    read. A zip that cannot be read is the student's problem, said for each exercise: not a
    plain file, not a zip, or damaged anywhere (a deflate, bzip2 or LZMA stream that fails
    raises its own library's error, none of them zipfile's, so every error counts)."""
    try:
        with os.fdopen(_open_plain(archive), "rb") as raw:
            listed = zip_directory(raw)
            if listed is not None and (listed[0] > MAX_ZIP_ENTRIES
                                       or listed[1] > MAX_ZIP_DIRECTORY):
                raise _TooManyEntries
            with zipfile.ZipFile(raw) as handed:
                members = [m for m in handed.infolist() if _plain_member(m)
                           and PurePosixPath(m.filename).name in files]
                nearest: dict[str, zipfile.ZipInfo] = {}
                for member in sorted(members,
                                     key=lambda m: (m.filename.count("/"), m.filename)):
                    nearest.setdefault(PurePosixPath(member.filename).name, member)
                for name, member in nearest.items():
                    with handed.open(member) as source:
                        (folder / name).write_bytes(source.read(MAX_FILE_BYTES + 1))
    except Exception as exc:  # noqa: BLE001 - whatever one zip does is its student's problem
        return _unreadable(archive, exc)
    return None


def _plain_member(member: zipfile.ZipInfo) -> bool:
    mode = member.external_attr >> 16
    is_link = (mode & 0o170000) == 0o120000
    encrypted = bool(member.flag_bits & 0x1)
    return not (member.is_dir() or is_link or encrypted or "__MACOSX/" in member.filename)
