"""The learner's language end to end: how it is chosen, lessons and messages in it, the English
fallback for what is not translated, and what `validate` says about translations."""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from narrowing import step_as

from gradtutor.checking.exercise_rules import EXERCISE_RULES
from gradtutor.env import Environment
from gradtutor.i18n import CatalogError, Untranslated, load_catalog
from gradtutor.lessons.course import default_lessons_dir, load_course
from gradtutor.lessons.load import load_lesson
from gradtutor.lessons.model import Slide
from gradtutor.lessons.translate import FieldKey, fingerprint, lesson_texts, load_translation

FIXTURES = Path(__file__).parent / "fixtures" / "course"
CJK = re.compile(r"[\u4e00-\u9fff]")

# The Chinese of the fixture lesson `basics`, by field; `requires-grad body` is left out, so it
# is missing and shows in English.
CHINESE = {
    FieldKey(None, "title"): "梯度基础",
    FieldKey(None, "summary"): "requires_grad 做什么，.grad 最后在哪里。",
    FieldKey("welcome", "title"): "欢迎",
    FieldKey("welcome", "body"): "张量可以记录对它们做过的运算。",
    FieldKey("requires-grad", "title"): "请求梯度",
    FieldKey("requires-grad", "notes"): "x*x 在 2 处的梯度是 4。",
    FieldKey("accumulate", "title"): "梯度会累加",
    FieldKey("accumulate", "body"): "调用两次 backward 会累加进 `.grad`，而不是替换它。",
}


def write_translation(folder: Path, texts: dict[FieldKey, str], lesson_file: str = "basics.yaml",
                      language: str = "zh-CN") -> Path:
    """A translation file of `texts`, each fingerprinted from the lesson's English as it is."""
    lesson = load_lesson(folder / lesson_file, EXERCISE_RULES)
    english = dict(lesson_texts(lesson))
    lines = [f"translates: {lesson.id}", f"language: {language}"]
    lesson_part = [key for key in texts if key.step is None]
    if lesson_part:
        lines.append("lesson:")
        for key in lesson_part:
            lines += [f"  {key.path}:", f"    source: '{fingerprint(english[key])}'",
                      f"    text: {json.dumps(texts[key], ensure_ascii=False)}"]
    lines.append("steps:")
    for step in dict.fromkeys(key.step for key in texts if key.step is not None):
        lines.append(f"  {step}:")
        for key in (k for k in texts if k.step == step):
            lines += [f"    {key.path}:", f"      source: '{fingerprint(english[key])}'",
                      f"      text: {json.dumps(texts[key], ensure_ascii=False)}"]
    path = folder / language / lesson_file
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """The fixture lesson `basics` alone, with a zh-CN translation that lacks one text."""
    folder = tmp_path / "course"
    folder.mkdir()
    shutil.copy(FIXTURES / "basics.yaml", folder / "basics.yaml")
    write_translation(folder, CHINESE)
    return folder


class Run:
    """The real CLI in-process, with its own streams, home and environment variables."""

    def __init__(self, home: Path) -> None:
        self.home = home

    def __call__(self, *argv: str, environ: dict[str, str] | None = None, utf8: bool = True,
                 stdin: str = "") -> tuple[int, str, str]:
        from gradtutor.cli import run

        stdout, stderr = io.StringIO(), io.StringIO()
        env = Environment(stdin=io.StringIO(stdin), stdout=stdout, stderr=stderr,
                          environ={"GRADTUTOR_HOME": str(self.home), **(environ or {})},
                          stdin_tty=False, stdout_tty=False, width=80, utf8=utf8)
        code = run(list(argv), env)
        return code, stdout.getvalue(), stderr.getvalue()


@pytest.fixture
def gt(tmp_path: Path) -> Run:
    return Run(tmp_path / "home")


def show_welcome(gt: Run, course: Path, *lang: str, environ: dict[str, str] | None = None,
                 utf8: bool = True) -> tuple[int, str, str]:
    return gt("show", "basics", "--step", "1", "--plain", "--lessons", str(course), *lang,
              environ=environ, utf8=utf8)


ZH_WELCOME = "张量可以记录对它们做过的运算。"
EN_WELCOME = "Tensors can record the operations done on them."


# --- choosing the language --------------------------------------------------------------------

def test_lang_beats_gradtutor_lang_which_beats_the_locale(gt: Run, course: Path) -> None:
    # the locale first: a --lang, once given, is kept and then beats it (below)
    _, out, _ = show_welcome(gt, course, environ={"LANG": "zh_CN.UTF-8"})
    assert ZH_WELCOME in out
    _, out, _ = show_welcome(gt, course, environ={"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"})
    assert EN_WELCOME in out
    both = {"GRADTUTOR_LANG": "en", "LANG": "zh_CN.UTF-8"}
    for where in (["--lang", "zh"], ["--lang=zh"]):
        code, out, err = show_welcome(gt, course, *where, environ=both)
        assert (code, err) == (0, "") and ZH_WELCOME in out and EN_WELCOME not in out
    code, out, _ = show_welcome(gt, course, environ=both)
    assert code == 0 and EN_WELCOME in out and ZH_WELCOME not in out
    _, out, _ = show_welcome(gt, course, "--lang", "en", environ={"GRADTUTOR_LANG": "zh"})
    assert EN_WELCOME in out


def test_the_language_chosen_with_lang_is_kept_for_later_commands(gt: Run, course: Path) -> None:
    """The end of a lesson names the next command; run as written, without --lang, it speaks
    the language the learner chose. GRADTUTOR_LANG and a new --lang still win."""
    code, out, _ = gt("start", "basics", "--lessons", str(course), "--lang", "zh",
                      stdin="n\nn\nn\n2\n\n1 3\n\n\n\n")
    assert code == 0 and "`gradtutor list` 会显示整个课程" in out
    english_locale = {"LANG": "en_US.UTF-8"}
    _, out, _ = show_welcome(gt, course, environ=english_locale)
    assert ZH_WELCOME in out
    _, out, _ = gt("list", "--lessons", str(course), environ=english_locale)
    assert "梯度基础" in out
    _, out, _ = show_welcome(gt, course, environ={**english_locale, "GRADTUTOR_LANG": "en"})
    assert EN_WELCOME in out
    _, out, _ = show_welcome(gt, course, "--lang", "en")
    assert EN_WELCOME in out
    _, out, _ = show_welcome(gt, course, environ={"LANG": "zh_CN.UTF-8"})
    assert EN_WELCOME in out  # the last --lang, kept, beats the locale


def test_a_data_folder_that_cannot_keep_the_language_still_speaks_it(
        gt: Run, course: Path) -> None:
    gt.home.parent.mkdir(parents=True, exist_ok=True)
    gt.home.write_text("not a folder", encoding="utf-8")
    code, out, err = show_welcome(gt, course, "--lang", "zh")
    assert ZH_WELCOME in out and "Traceback" not in err


def test_lang_works_before_the_command_too(gt: Run, course: Path) -> None:
    code, out, err = gt("--lang", "zh", "show", "basics", "--step", "1", "--plain",
                        "--lessons", str(course))
    assert (code, err) == (0, "") and ZH_WELCOME in out
    # the one nearer the command wins, as with any repeated option
    _, out, _ = gt("--lang", "zh", "show", "basics", "--step", "1", "--plain",
                   "--lessons", str(course), "--lang", "en")
    assert EN_WELCOME in out


def test_an_output_that_cannot_show_chinese_gets_english(gt: Run, course: Path) -> None:
    code, out, err = show_welcome(gt, course, "--lang", "zh", utf8=False)
    assert code == 0 and EN_WELCOME in out and not CJK.search(out)
    assert err.count("\n") == 1 and err.startswith("gradtutor: warning: ") and "UTF-8" in err
    # from the locale, English is no surprise: no warning
    fresh = Run(gt.home.parent / "fresh")  # no --lang kept from above
    code, out, err = show_welcome(fresh, course, environ={"LANG": "zh_CN.GB2312"}, utf8=False)
    assert (code, err) == (0, "") and EN_WELCOME in out


@pytest.mark.parametrize("argv", [["--lang", "klingon", "list"], ["list", "--lang", "fr"],
                                  ["show", "basics", "--lang=xx"]])
def test_an_unknown_lang_is_a_usage_error_in_one_line(gt: Run, course: Path,
                                                      argv: list[str]) -> None:
    code, out, err = gt(*argv, "--lessons", str(course))
    assert code == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith("gradtutor: error: unknown language ") and "en, zh" in err


def test_an_unknown_gradtutor_lang_warns_once_and_speaks_english(gt: Run, course: Path) -> None:
    code, out, err = show_welcome(gt, course, environ={"GRADTUTOR_LANG": "fr"})
    assert code == 0 and EN_WELCOME in out
    assert err.count("\n") == 1 and "GRADTUTOR_LANG='fr'" in err


def test_a_broken_interface_catalog_warns_once_and_speaks_english(
        gt: Run, course: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(lang: str) -> None:
        raise CatalogError("gradtutor/locale/zh-CN/cli.yaml: cannot be read (ScannerError)")

    monkeypatch.setattr("gradtutor.i18n.translator", broken)
    code, _, err = gt("show", "nothing", "--lang", "zh", "--lessons", str(course))
    lines = err.splitlines()
    assert code == 2 and len(lines) == 2
    assert lines[0].startswith("gradtutor: warning: ") and "cli.yaml" in lines[0]
    assert lines[1].startswith("gradtutor: error: no lesson 'nothing'")


# --- lessons in the language ------------------------------------------------------------------

def test_the_shipped_grad_lesson_shows_in_chinese(gt: Run) -> None:
    lessons = default_lessons_dir()
    translation, problems = load_translation(lessons / "grad.yaml", "zh-CN")
    assert problems == [] and translation is not None
    grad = load_lesson(lessons / "grad.yaml", EXERCISE_RULES)
    first = grad.steps[0].id
    title = translation.entries[FieldKey(first, "title")].text
    assert title and CJK.search(title)
    code, out, err = gt("show", "grad", "--lang", "zh", "--plain", "--step", "1")
    assert (code, err) == (0, "")
    lesson_title = translation.entries[FieldKey(None, "title")].text
    assert title in out and lesson_title is not None and lesson_title in out
    body_start = (translation.entries[FieldKey(first, "body")].text or "").split("：")[0]
    assert CJK.search(body_start) and body_start in out


def test_a_text_without_translation_shows_in_english_and_is_untranslated(gt: Run,
                                                                         course: Path) -> None:
    lesson = load_course(course, "zh-CN", rules=EXERCISE_RULES).find("basics")
    slide = step_as(lesson, 1, Slide)
    assert slide.title == "请求梯度" and not isinstance(slide.title, Untranslated)
    assert slide.body == "Set `requires_grad=True` to track a tensor."
    assert isinstance(slide.body, Untranslated)
    assert not isinstance(lesson.title, Untranslated) and lesson.title == "梯度基础"
    # code is never translated, and never marked
    assert not isinstance(slide.code, Untranslated)
    code, out, err = gt("show", "basics", "--step", "2", "--plain", "--lessons", str(course),
                        "--lang", "zh")
    assert (code, err) == (0, "")
    assert "请求梯度" in out and "to track a tensor." in out


def test_english_never_reads_a_translation(gt: Run, course: Path) -> None:
    (course / "zh-CN" / "basics.yaml").write_text("translates: [\n", encoding="utf-8")
    code, out, err = show_welcome(gt, course)
    assert (code, err) == (0, "") and EN_WELCOME in out
    lesson = load_course(course, rules=EXERCISE_RULES).find("basics")
    assert not any(isinstance(text, Untranslated) for _, text in lesson_texts(lesson))


def test_a_broken_translation_warns_with_its_line_and_the_lesson_shows_in_english(
        gt: Run, course: Path) -> None:
    path = course / "zh-CN" / "basics.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("    text:", "    txt:", 1),
                    encoding="utf-8")
    code, out, err = show_welcome(gt, course, "--lang", "zh")
    assert code == 0 and EN_WELCOME in out and ZH_WELCOME not in out
    assert err.count("\n") == 1
    # the warning is in the interface's Chinese; the author's problem stays English
    assert re.search(r"^警告：.*zh-CN/basics\.yaml:\d+:\d+: unknown key 'txt'", err), err
    lesson = load_course(course, "zh-CN", rules=EXERCISE_RULES).find("basics")
    assert all(isinstance(text, Untranslated) for _, text in lesson_texts(lesson))
    code, _, err = gt("validate", str(course), "--no-run")
    assert code == 2 and re.search(r"zh-CN/basics\.yaml:\d+:\d+: unknown key 'txt'", err)


def test_translations_are_never_loaded_as_lessons(gt: Run, course: Path) -> None:
    code, out, err = gt("list", "--lessons", str(course), "--lang", "zh")
    assert (code, err) == (0, "") and "梯度基础" in out
    lessons = load_course(course, rules=EXERCISE_RULES).lessons
    assert lessons[0].id == "basics" and len(lessons) == 1


# --- progress is the same in every language ---------------------------------------------------

def test_progress_made_in_chinese_is_read_in_english(gt: Run, course: Path) -> None:
    code, out, _ = gt("start", "basics", "--lessons", str(course), "--lang", "zh",
                      stdin="n\nn\nq\n")
    assert code == 0 and CJK.search(out)
    saved = json.loads((gt.home / "progress.json").read_text(encoding="utf-8"))
    assert saved["lessons"]["basics"]["step"] == "accumulate"
    assert not CJK.search(json.dumps(saved, ensure_ascii=False))
    code, out, _ = gt("start", "basics", "--lessons", str(course), "--lang", "en", stdin="q\n")
    assert code == 0 and "step 3 of 5" in out
    assert "Your place is saved at step 3 of 5." in out


# --- interface text in the language -----------------------------------------------------------

def test_errors_and_hints_are_said_in_chinese(gt: Run, course: Path) -> None:
    code, _, err = gt("show", "basic", "--lessons", str(course), "--lang", "zh")
    assert code == 2
    assert err == ("gradtutor：错误：没有课程“basic”"
                   "（提示：你是不是想输入“basics”？（见 `gradtutor list`））\n")
    code, _, err = gt("reset", "--lang", "zh")
    assert code == 2 and err.startswith("gradtutor：错误：未经确认，不会重置你的全部进度（提示：")


def test_a_finished_lesson_asks_in_chinese(gt: Run, course: Path) -> None:
    gt("start", "basics", "--lessons", str(course), stdin="n\nn\nn\n2\n\n1 3\n\n\n\n")
    code, out, _ = gt("start", "basics", "--lessons", str(course), "--lang", "zh", stdin="q\n")
    assert code == 0
    assert "你已经学完了“梯度基础”。" in out and "你的选择 [c/r/s/q]：" in out
    assert "  c  从第 5 步继续（共 5 步）" in out


def test_help_is_chinese_with_lang_zh_and_unchanged_in_english(
        gt: Run, capsys: pytest.CaptureFixture[str]) -> None:
    catalog = load_catalog("zh-CN")
    start_help = next(t for t in catalog if t.startswith("Open the walkthrough"))
    chinese_first_line = catalog[start_help].split("\n")[0]
    for argv in (["--lang", "zh", "start", "--help"], ["start", "--lang", "zh", "--help"],
                 ["start", "--help", "--lang", "zh"]):
        code, _, _ = gt(*argv)
        out = capsys.readouterr().out
        assert code == 0
        assert chinese_first_line in out and "Open the walkthrough" not in out
        assert catalog["Load lessons from this folder instead of the built-in ones."] in out
        assert "Show this message and exit." not in out
    gt("start", "--help", "--lang", "en")
    out = capsys.readouterr().out
    assert "Open the walkthrough, where you left off." in out and not CJK.search(out)
    assert "Example: gradtutor start grad" in out and "--lang" in out


@pytest.mark.parametrize("command", ["start", "list", "show", "quiz", "progress", "reset",
                                     "check", "watch", "validate", "doctor"])
def test_every_command_takes_lang(gt: Run, capsys: pytest.CaptureFixture[str],
                                  command: str) -> None:
    code, _, _ = gt(command, "--help", "--lang", "zh")
    out = capsys.readouterr().out
    assert code == 0 and "--lang" in out and "使用的语言" in out


@pytest.mark.parametrize("command", ["start", "check", "watch", "validate"])
def test_chinese_help_wraps_between_characters_at_60_columns(
        gt: Run, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        command: str) -> None:
    from rich.cells import cell_len

    monkeypatch.setenv("COLUMNS", "60")
    code, _, _ = gt(command, "--help", "--lang", "zh")
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and any(CJK.search(line) for line in lines)
    assert [line for line in lines if cell_len(line) > 60] == []
    # no Chinese sentence cut short (Typer itself shortens a long `[env var: ...]`, as in English)
    assert [line for line in lines if "…" in line and CJK.search(line)] == []


def test_check_json_says_its_language(gt: Run, tmp_path: Path) -> None:
    answer = tmp_path / "order.txt"
    answer.write_text("opt.zero_grad()\nloss = model(x).pow(2).mean()\nloss.backward()\n"
                      "opt.step()\n", encoding="utf-8")
    for lang, code_of_lang in (("zh", "zh-CN"), ("en", "en")):
        code, out, _ = gt("check", "training-step", str(answer), "--json", "--lessons",
                          str(FIXTURES), "--lang", lang)
        document = json.loads(out)
        assert code == 0 and document["passed"] is True and document["lang"] == code_of_lang


# --- validate and translations ----------------------------------------------------------------

def test_validate_lists_missing_texts_field_by_field(gt: Run, course: Path) -> None:
    code, out, err = gt("validate", str(course), "--no-run")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == "[OK] 1 lesson OK (5 steps)"
    total = sum(1 for _ in lesson_texts(load_lesson(course / "basics.yaml", EXERCISE_RULES)))
    assert re.search(rf"zh-CN/basics\.yaml: zh-CN translation of lesson 'basics': "
                     rf"{len(CHINESE)} of {total} texts translated \({total - len(CHINESE)} "
                     rf"missing\)$", lines[1])
    assert any(line.endswith("missing (shown in English): step requires-grad: body")
               for line in lines)
    assert any(line.endswith("missing (shown in English): step check: title, "
                             "questions.grad-value.prompt, questions.grad-value.choices.a.text, "
                             "questions.grad-value.choices.a.why, "
                             "questions.grad-value.choices.b.text, "
                             "questions.grad-value.choices.b.why, "
                             "questions.grad-value.choices.c.text, "
                             "questions.grad-value.choices.c.why, "
                             "questions.accumulates.prompt, "
                             "questions.accumulates.choices.a.text, "
                             "questions.accumulates.choices.a.why, "
                             "questions.accumulates.choices.b.text, "
                             "questions.accumulates.choices.b.why, "
                             "questions.accumulates.choices.c.text, "
                             "questions.accumulates.choices.c.why, intro") for line in lines)
    assert " ".join(out.split()).endswith(f"translations: {total - len(CHINESE)} texts missing "
                                          "and 0 stale, shown in English until translated "
                                          "(listed above)")


def test_validate_finds_stale_translations_after_the_english_changed(gt: Run,
                                                                      course: Path) -> None:
    lesson_file = course / "basics.yaml"
    lesson_file.write_text(lesson_file.read_text(encoding="utf-8").replace(
        "Tensors can record the operations done on them.",
        "Tensors can record every operation done on them."), encoding="utf-8")
    code, out, _ = gt("validate", str(course), "--no-run")
    assert code == 0
    stale = [line for line in out.splitlines() if "stale:" in line]
    assert len(stale) == 1
    now = fingerprint("Tensors can record every operation done on them.")
    assert re.search(r"zh-CN/basics\.yaml:\d+:\d+: stale: the English of step welcome body "
                     r"changed after it was translated; revise the text, then set "
                     rf"`source: {now}`", stale[0])
    assert "texts missing and 1 stale" in " ".join(out.split())
    # and the learner sees the new English, marked, instead of the old translation
    code, out, _ = show_welcome(gt, course, "--lang", "zh")
    assert "every operation" in out and ZH_WELCOME not in out
    body = step_as(load_course(course, "zh-CN", rules=EXERCISE_RULES).find("basics"), 0,
                   Slide).body
    assert isinstance(body, Untranslated)


def test_validate_a_translation_file_checks_it_with_its_lesson(gt: Run, course: Path) -> None:
    code, out, err = gt("validate", str(course / "zh-CN" / "basics.yaml"), "--no-run")
    assert (code, err) == (0, "")
    assert out.startswith("[OK] 1 lesson OK (5 steps)\n") and "zh-CN translation of lesson" in out
    code, out, err = gt("validate", str(course / "zh-CN"), "--no-run")
    assert (code, err) == (0, "") and "zh-CN translation of lesson 'basics'" in out


def test_validate_names_a_translation_without_its_lesson(gt: Run, course: Path) -> None:
    shutil.copy(course / "zh-CN" / "basics.yaml", course / "zh-CN" / "old.yaml")
    code, out, _ = gt("validate", str(course), "--no-run")
    assert code == 0
    assert re.search(r"zh-CN/old\.yaml: unused: there is no lesson .*old\.yaml to translate",
                     out)


def test_validate_of_a_complete_translation_says_so(gt: Run, course: Path) -> None:
    lesson = load_lesson(course / "basics.yaml", EXERCISE_RULES)
    write_translation(course, {key: f"译：{text}" for key, text in lesson_texts(lesson)})
    code, out, _ = gt("validate", str(course), "--no-run")
    assert code == 0
    assert out.splitlines()[-1] == "[OK] translations complete: zh-CN"


def test_validate_speaks_chinese_but_author_lines_stay_english(gt: Run, course: Path) -> None:
    code, out, _ = gt("validate", str(course), "--no-run", "--lang", "zh")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "[OK] 1 节课没有问题（共 5 步）"
    assert "texts translated" in lines[1]
    assert any(line.startswith("翻译：") for line in lines)


def test_english_start_up_never_imports_the_translation_code(tmp_path: Path,
                                                              course: Path) -> None:
    from import_log import imported_modules

    english = imported_modules(["show", "basics", "--plain", "--lessons", str(course)],
                               tmp_path)
    assert "gradtutor.lessons.translate" not in english
    chinese = imported_modules(["show", "basics", "--plain", "--lessons", str(course),
                                "--lang", "zh"], tmp_path)
    assert "gradtutor.lessons.translate" in chinese


def test_the_progress_store_warns_in_chinese(gt: Run, course: Path) -> None:
    gt.home.mkdir(parents=True)
    (gt.home / "progress.json").write_text('{"version": 1, "lessons": {"basics": 3}}')
    code, out, err = gt("progress", "--lessons", str(course), "--lang", "zh")
    assert code == 0
    assert re.fullmatch(r"警告：已把保存的进度中的 lessons\.basics 放到一旁（它的类型不对）；"
                        r"其余进度都保留了，原来的文件保存在 \S+progress\.\S+\.bak\.json\n",
                        err), err
    assert "basics  梯度基础\n  未开始；已看过 0/5 步\n" in out  # the lesson, in Chinese too


@pytest.mark.parametrize(("argv", "english", "chinese"), [
    (["show", "basics", "--stp", "2"], "No such option: --stp (Possible options: --step)",
     "没有选项 --stp（你是不是想用 --step？）"),
    (["strat"], "No such command 'strat'. Did you mean 'start'?",
     "没有命令“strat”；你是不是想输入“start”？"),
    (["show"], "Missing argument 'LESSON'.", "缺少 LESSON"),
])
def test_click_usage_errors_are_said_in_chinese_too(gt: Run, course: Path, argv: list[str],
                                                    english: str, chinese: str) -> None:
    code, _, err = gt(*argv, "--lessons", str(course))
    assert code == 2 and err.startswith(f"gradtutor: error: {english} (hint: see `gradtutor ")
    code, _, err = gt(*argv, "--lessons", str(course), "--lang", "zh")
    assert code == 2 and err.startswith(f"gradtutor：错误：{chinese}（提示：见 `gradtutor ")
    assert err.count("\n") == 1


@pytest.mark.parametrize("how", [{"argv": ("--lang", "zh")}, {"environ": {"GRADTUTOR_LANG": "zh"}}])
def test_bare_gradtutor_in_chinese(gt: Run, how: dict[str, Any]) -> None:
    code, out, err = gt(*how.get("argv", ()), environ=how.get("environ"))
    assert (code, err) == (0, "")
    assert "从这里开始：  gradtutor start" in out
    assert "  start     打开课程讲解，从你上次停下的地方继续。" in out
    assert out.splitlines()[-1] == "`gradtutor --help` 列出所有命令和选项。"


def test_chinese_help_says_click_and_typer_words_in_chinese(gt: Run) -> None:
    """Prior review P32: Click's and Typer's own words ("Usage:", "[OPTIONS]", "[required]",
    "[env var: ...]") stayed English in a Chinese help; they stay English in an English one."""
    from typer.testing import CliRunner

    from gradtutor.cli import run

    runner = CliRunner()

    def helped(*argv: str) -> str:
        env = Environment(stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO(),
                          environ={"GRADTUTOR_HOME": str(gt.home)}, stdin_tty=False,
                          stdout_tty=False, width=100)
        with runner.isolation(env={"COLUMNS": "100"}) as streams:
            code = run(list(argv), env)
            said = streams[0].getvalue().decode("utf-8")
        assert code == 0, argv
        return said

    check = helped("--lang", "zh", "check", "--help")
    assert "用法：gradtutor check [选项] [EXERCISE] [FILE]" in check
    assert "[环境变量：GRADTUTOR_WORKSPACE]" in check
    show = helped("show", "--help", "--lang", "zh")
    assert "[必填]" in show
    validate = helped("--lang", "zh", "validate", "--help")
    assert "[默认：run]" in validate
    root = helped("--lang", "zh", "--help")
    assert "用法：gradtutor [选项] 命令 [参数]..." in root
    for output in (check, show, validate, root):
        assert not re.search(r"Usage|OPTIONS|COMMAND|ARGS|env var|required|default:", output)
    # English after Chinese: Typer's words were put back
    english = helped("check", "--help", "--lang", "en")
    assert "Usage: gradtutor check [OPTIONS] [EXERCISE] [FILE]" in english
    assert "[env var: GRADTUTOR_WORKSPACE]" in english and not CJK.search(english)
    assert "[required]" in helped("show", "--help", "--lang", "en")
    code, _, err = gt("--lang", "zh", "translate")
    assert code == 2 and err.startswith("gradtutor：错误：缺少命令（提示：")


def test_show_plain_on_a_60_column_terminal_reflows_lesson_text(tmp_path: Path) -> None:
    """Prior review P10 / P34: `show --plain` kept the lesson file's line breaks, then wrapped
    each line again (ragged English), and a Chinese list item's next line began at column 0."""
    from gradtutor.cli import run

    folder = tmp_path / "course"
    folder.mkdir()
    source = (FIXTURES / "basics.yaml").read_text(encoding="utf-8")
    body = ("      Tensors can record the operations done on them, so that a\n"
            "      later backward pass can walk those records back from the loss.\n\n"
            "      - `w`: a tensor created with `requires_grad=True`, whose\n"
            "        gradient lands in `w.grad`.\n")
    old = "      Tensors can record the operations done on them.\n"
    assert old in source
    (folder / "basics.yaml").write_text(source.replace(old, body), encoding="utf-8")
    write_translation(folder, {FieldKey("welcome", "body"): (
        "张量可以记录对它们做过的运算，之后一次反向传播就能沿着这些记录从损失走回去。\n\n"
        "- `w`：一个用 `requires_grad=True` 创建的张量，它的梯度会存进 `w.grad`，"
        "供你在反向传播之后读取。")})

    def shown(*lang: str) -> list[str]:
        stdout = io.StringIO()
        env = Environment(stdin=io.StringIO(), stdout=stdout, stderr=io.StringIO(),
                          environ={"GRADTUTOR_HOME": str(tmp_path / "home")},
                          stdin_tty=True, stdout_tty=True, width=60)
        code = run(["show", "basics", "--step", "welcome", "--plain", "--lessons",
                    str(folder), *lang], env)
        assert code == 0
        lines = [line.rstrip() for line in stdout.getvalue().splitlines()]
        return lines[lines.index("") + 1:]  # the body, after the header

    assert shown()[:5] == [
        "Tensors can record the operations done on them, so that a",
        "later backward pass can walk those records back from the",
        "loss.",
        "",
        "- `w`: a tensor created with `requires_grad=True`, whose",
    ]
    assert shown()[5] == "  gradient lands in `w.grad`."
    assert shown("--lang", "zh")[:5] == [
        "张量可以记录对它们做过的运算，之后一次反向传播就能沿着这些记",
        "录从损失走回去。",
        "",
        "- `w`：一个用 `requires_grad=True` 创建的张量，它的梯度会存",
        "  进 `w.grad`，供你在反向传播之后读取。",
    ]
