"""The reviewer's report's Evidence notes are in readers' words; the diagnostics file beside it keeps the
readers' technical text (issue 22, item 4)."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from esrp_report.cli.main import app
from esrp_report.model import Problem
from esrp_report.render.document import reader_words

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
runner = CliRunner()
FALLBACK = "Part of this file could not be read as expected"


@pytest.mark.parametrize(
    ("message", "words"),
    [
        (
            "no Stress, DatabaseBackup report in the results",
            "The results hold no Stress, DatabaseBackup report",
        ),
        (
            "report and result XML disagree on Transactional I/O Instance1.1 db_reads_avg_latency: "
            "HTML 12.0, XML 12.5 (XML used)",
            "The test report and its result XML give a figure differently; the result XML's figure is used",
        ),
        (
            "required section missing: Test Summary (expected a table with Overall Test Result); what the "
            "report holds is used, the rules that need this section are not evaluated",
            "The report has no Test Summary section; the rules that need it could not be evaluated.",
        ),
        (
            "the closing catalog lists 480 sample(s); 478 were read",
            "The counter log lists 480 samples; 478 of them could be read.",
        ),
        ("record of unknown kind 7 (12 bytes) skipped", FALLBACK),
    ],
)
def test_a_problem_is_said_in_readers_words(message: str, words: str) -> None:
    severity, source, sentence = reader_words(
        Problem("C:\\results\\Stress_1.html", message, severity="warning")
    )
    assert (severity, source) == ("Warning", "Stress_1.html")
    assert sentence.startswith(words)


def test_a_damaged_folder_is_noted_in_readers_words_and_diagnosed_in_full(tmp_path: Path) -> None:
    folder = tmp_path / "EMAIL5"
    shutil.copytree(SAMPLES / "EMAIL5", folder)
    stress = folder / "Stress_2011_3_14_9_2_3.html"
    text = stress.read_text(encoding="utf-8")
    start = text.rindex("<fieldset>", 0, text.index("<legend>Test Summary</legend>"))
    stress.write_text(
        text[:start] + text[text.index("</fieldset>", start) + len("</fieldset>") :], encoding="utf-8"
    )
    manifest = tmp_path / "m.toml"
    source = (SAMPLES / "vmax.toml").read_text(encoding="utf-8")
    head = source[: source.index("[[servers]]")]
    tail = source[source.index("[tables.") :]
    head = head.replace("logo = ", "# logo = ")
    manifest.write_text(
        head + '[[servers]]\nlabel = "Server 4"\nresults = "EMAIL5"\n\n' + tail, encoding="utf-8"
    )
    result = runner.invoke(
        app, ["build", str(manifest), "-o", str(tmp_path / "out"), "--format", "html", "--allow-fail"]
    )
    assert result.exit_code in (0, 3), result.output
    page = (tmp_path / "out" / "m-review.html").read_text(encoding="utf-8")  # the reviewer's report's notes
    notes = page[page.index('id="evidence-problems"') :]
    notes = html.unescape(re.sub(r"<[^>]+>", " ", notes[: notes.index("</table>")]))
    notes = " ".join(notes.split())
    assert "The report has no Test Summary section; the rules that need it could not be evaluated." in notes
    diagnostics = (tmp_path / "out" / "m-diagnostics.txt").read_text(encoding="utf-8")
    assert "required section missing: Test Summary" in diagnostics
    # no reader's technical text in the document: none of the diagnostics' messages, no field names
    for line in diagnostics.splitlines():
        if line.startswith(("  warning\t", "  error\t")):
            assert line.split("\t")[-1] not in notes
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", notes)
