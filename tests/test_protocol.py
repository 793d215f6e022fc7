"""The messages between the tutor and its processes: each encodes to one JSON line and decodes
back to itself, and every decoder refuses what is not its message (learner code holds the
result pipe and may write anything). Pure: no process is started."""

from __future__ import annotations

from typing import Any

import pytest

from gradtutor.checking import protocol, results
from gradtutor.checking.protocol import Malformed, WorkerExit
from gradtutor.checking.results import Fault
from gradtutor.errors import ExitCode
from gradtutor.runtime import wire as server_wire

TRACE = 'File "a.py", line 2, in read_grad\n'
EXPECTED = protocol.expected([{"w": [1.0]}], [{"grad": [2.0]}])


def wire(message: Any) -> Any:
    """A message as the other side receives it: one JSON line, parsed."""
    data = protocol.line(message)
    assert data.endswith(b"\n") and data.count(b"\n") == 1 and data.isascii()
    return protocol.parse(data)


def test_the_worker_s_exit_codes_mean_one_thing_each() -> None:
    # int(): they are equal as the numbers a process exits with (mypy holds two enums'
    # members apart, Python's IntEnum compares them as ints)
    assert int(WorkerExit.SOFTWARE) == int(ExitCode.SOFTWARE) == 70  # gradtutor itself failed
    assert int(WorkerExit.OK) == int(ExitCode.OK)
    others = {code.value for code in WorkerExit} - {WorkerExit.OK, WorkerExit.SOFTWARE}
    assert others == {71, 72} and not others & {code.value for code in ExitCode}


@pytest.mark.parametrize("message", [
    EXPECTED,
    protocol.started(),
    protocol.observed([{"returned": [2.0]}, {"error": protocol.raised("ValueError", "x", TRACE)},
                       {"error": protocol.sys_exit("3", TRACE)}]),
    protocol.learner_error(protocol.raised("KeyboardInterrupt", "", TRACE)),
    protocol.learner_error(protocol.sys_exit("'bye'", TRACE)),
    protocol.learner_error(protocol.no_function("read_grad")),
    protocol.learner_error(protocol.not_callable("read_grad")),
    protocol.learner_error(protocol.wrong_arity("read_grad", 2, "(w)")),
    protocol.worker_error(protocol.raised("ModuleNotFoundError", "No module named 'torch'", "")),
    protocol.snippet_ran("tensor(2.)", {"xs": [1.0, 2.5]}),
    protocol.snippet_failed("NameError: name 'x' is not defined"),
])
def test_every_result_message_decodes_to_itself(message: Any) -> None:
    kind = message["type"]
    decoded = (protocol.decode_expected(wire(message)) if kind == "expected" else
               protocol.decode_started(wire(message)) if kind == "started" else
               protocol.decode_observed(wire(message), 3) if kind == "observed" else
               protocol.decode_learner_error(wire(message)) if kind == "learner_error" else
               protocol.decode_worker_error(wire(message)) if kind == "worker_error" else
               protocol.decode_snippet(wire(message)))
    assert decoded == message


def test_a_learner_error_s_stage_follows_from_what_went_wrong() -> None:
    assert protocol.learner_error(protocol.sys_exit("0", ""))["stage"] == "load"
    assert protocol.learner_error(protocol.raised("E", "", ""))["stage"] == "load"
    assert protocol.learner_error(protocol.wrong_arity("f", 1, "()"))["stage"] == "function"


@pytest.mark.parametrize(("decode", "value"), [
    (protocol.decode_expected, {"type": "expected", "cases": [], "expected": []}),
    (protocol.decode_expected, {"type": "expected", "cases": [1, 2], "expected": [1]}),
    (protocol.decode_expected, {"type": "started", "cases": [1], "expected": [1]}),
    (protocol.decode_expected, [1]),
    (lambda v: protocol.decode_observed(v, 2), {"type": "observed", "observed": [{}]}),
    (lambda v: protocol.decode_observed(v, 1), {"type": "observed", "observed": [1]}),
    (lambda v: protocol.decode_observed(v, 1),
     {"type": "observed", "observed": [{"error": {"type": "E", "message": 3, "traceback": ""}}]}),
    (lambda v: protocol.decode_observed(v, 1),  # a case cannot lack its function
     {"type": "observed", "observed": [{"error": protocol.no_function("f")}]}),
    (protocol.decode_learner_error, {"type": "learner_error", "stage": "load",
                                     "error": protocol.no_function("f")}),
    (protocol.decode_learner_error, {"type": "learner_error", "stage": "function",
                                     "error": protocol.raised("E", "", "")}),
    (protocol.decode_learner_error, {"type": "learner_error", "stage": "function",
                                     "error": {"problem": "no-function"}}),
    (protocol.decode_learner_error, {"type": "learner_error", "stage": "function",
                                     "error": {"problem": "wrong-arity", "name": "f",
                                               "arity": True, "parameters": "()"}}),
    (protocol.decode_learner_error, {"type": "learner_error", "stage": "function",
                                     "error": {"problem": "something new", "name": "f"}}),
    (protocol.decode_learner_error, {"type": "learner_error", "stage": "run",
                                     "error": protocol.raised("E", "", "")}),
    (protocol.decode_worker_error, {"type": "worker_error", "error": "x"}),
    (protocol.decode_worker_error, {"type": "worker_error",
                                    "error": {"type": "E", "message": "m"}}),
    (protocol.decode_snippet, {"type": "snippet", "shown": 3, "series": {}}),
    (protocol.decode_snippet, {"type": "snippet", "error": {"type": "E"}}),
])
def test_decoders_refuse_what_is_not_their_message(decode: Any, value: Any) -> None:
    with pytest.raises(Malformed):
        decode(value)


def test_extra_fields_are_dropped_not_passed_on() -> None:
    decoded = protocol.decode_worker_error(
        {"type": "worker_error", "error": {**protocol.raised("E", "m", ""), "x": 1}, "y": 2})
    assert decoded == protocol.worker_error(protocol.raised("E", "m", ""))


def lines(*messages: Any) -> bytes:
    return b"".join(protocol.line(m) for m in messages)


OBSERVED = protocol.observed([{"returned": [2.0]}])


@pytest.mark.parametrize(("data", "fault"), [
    (lines(EXPECTED, OBSERVED), None),
    (lines(EXPECTED) + b'{"type": "obs', None),  # it died while writing: nothing more came
    (lines(EXPECTED, EXPECTED), Fault.OUT_OF_ORDER),
    (lines(OBSERVED), Fault.OUT_OF_ORDER),
    (lines(EXPECTED, OBSERVED, OBSERVED), Fault.OUT_OF_ORDER),
    (lines(protocol.started(), OBSERVED), Fault.NOT_A_RESULT),  # no references of the tutor's
    (lines(EXPECTED) + b"garbage\n", Fault.NOT_A_RESULT),
    (lines(EXPECTED, protocol.observed([])), Fault.WRONG_SHAPE),
    (lines({"type": "expected", "cases": [1], "expected": []}, OBSERVED), Fault.BAD_REFERENCES),
])
def test_a_check_s_channel_is_read_for_shape_and_order(data: bytes, fault: Fault | None) -> None:
    read = results.read_check(data, False)
    assert read.fault is fault
    assert (read.expected == EXPECTED) == (fault is None)
    assert results.read_check(data, True).fault is Fault.OVERFLOW


def test_a_check_s_messages_in_a_list_are_read_as_its_channel_is() -> None:
    assert results.check_messages([EXPECTED, OBSERVED]).final == OBSERVED
    assert results.check_messages([OBSERVED, EXPECTED]).fault is Fault.OUT_OF_ORDER


def test_with_the_tutor_s_references_the_worker_s_own_are_out_of_order() -> None:
    read = results.read_check(lines(protocol.started(), OBSERVED), False, EXPECTED)
    assert read.fault is None and read.expected == EXPECTED and read.final == OBSERVED
    assert results.read_check(lines(EXPECTED, OBSERVED), False, EXPECTED).fault is not None


@pytest.mark.parametrize(("message", "decoded"), [
    (server_wire.server_ready(12, None), None),
    (server_wire.server_ready(12, 13), None),
    (server_wire.server_failed("ImportError: no torch"), None),
    (server_wire.child_took(14), None),
    (server_wire.child_exit(-9), None),
    (server_wire.spare(15), None),
    (server_wire.cloned(16), None),
    ({"type": "child", "pid": 0}, Malformed),
    ({"type": "child", "pid": True}, Malformed),
    ({"type": "exit", "code": "0"}, Malformed),
    ({"ready": True, "references": 12}, Malformed),  # nothing is read by its keys alone
])
def test_the_fork_server_s_messages(message: Any, decoded: type[Exception] | None) -> None:
    data = protocol.line(message)
    if decoded is None:
        assert server_wire.decode_from_server(data) == message
    else:
        with pytest.raises(decoded):
            server_wire.decode_from_server(data)


def test_requests_decode_to_themselves() -> None:
    check = protocol.check_request(checker="read-grad", function="read_grad", source="x = 1",
                                   filename="a.py", seed=3, memory_bytes=1, file_bytes=2)
    snippet = protocol.snippet_request(code="x = 1", show="x", series=("xs",), memory_bytes=1,
                                       file_bytes=2)
    for request in (check, snippet, {**check, "reference": "tutor"}):
        assert protocol.decode_request(wire(request)) == request
    for broken in ({**check, "seed": "3"}, {**check, "reference": "learner"},
                   {**snippet, "series": [1]}, {**check, "kind": "other"}):
        with pytest.raises(Malformed):
            protocol.decode_request(broken)
    hand_over = server_wire.hand_over("/tmp/r.json", "/tmp/work")
    assert server_wire.decode_to_server(protocol.line(hand_over)) == hand_over
    assert server_wire.decode_to_server(protocol.line(server_wire.clone())) == server_wire.clone()
    question = server_wire.reference_request("read-grad", 3)
    assert server_wire.decode_reference_request(protocol.line(question)) == question
    assert server_wire.decode_reference(protocol.line(EXPECTED)) == EXPECTED
    with pytest.raises(Malformed):
        server_wire.decode_reference(protocol.line(protocol.worker_error(
            protocol.raised("MemoryError", "", ""))))
