"""TaintTolerationComparisonOperators in the embedded API server's validation (1.37's
ValidateTolerations and apimachinery's content.IsDecimalInteger): with the gate off ``Lt`` and
``Gt`` are not supported values (upstream then lists all four operators, and only ``Equal`` and
``Exists`` for an operator it does not know, gate or not); with it on they are, with a value that
is an integer written in canonical form and that Go's ``strconv.ParseInt`` reads as an int64 (its
error is the message); an update keeps a pod that uses them valid with the gate off. The integer
cases are upstream's TestIsDecimalInteger table."""

from __future__ import annotations

import pytest

from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver.admission import admit_new_pod, validate_update
from kubesched.sim.apiserver.errors import APIError
from kubesched.sim.apiserver.validation.core import decimal_integer_errors, parse_int64_error, validate_tolerations
from kubesched.testing import make_pod

ON = FeatureGates({"TaintTolerationComparisonOperators": True})

DECIMAL_INTEGER_CASES = [
    ("0", True),  # zero
    ("1", True),  # positive single digit 1
    ("2", True),  # positive single digit 2
    ("5", True),  # positive single digit 5
    ("9", True),  # positive single digit 9
    ("-5", True),  # negative single digit
    ("-1", True),  # negative single digit 1
    ("-9", True),  # negative single digit 9
    ("100", True),  # number starting with 1
    ("234", True),  # number starting with 2
    ("345", True),  # number starting with 3
    ("456", True),  # number starting with 4
    ("567", True),  # number starting with 5
    ("678", True),  # number starting with 6
    ("789", True),  # number starting with 7
    ("890", True),  # number starting with 8
    ("999", True),  # number starting with 9
    ("123", True),  # positive multi-digit
    ("-456", True),  # negative multi-digit
    ("-100", True),  # negative starting with 1
    ("-987", True),  # negative starting with 9
    ("9223372036854775807", True),  # large positive number
    ("-9223372036854775808", True),  # large negative number
    ("12345678901234567890", True),  # very long valid number
    ("999999999999", True),  # all nines
    ("-0", False),  # negative zero
    ("00", False),  # double zero
    ("000", False),  # triple zero
    ("0000000", False),  # many zeros
    ("01", False),  # leading zero single digit
    ("02", False),  # leading zero digit 2
    ("09", False),  # leading zero digit 9
    ("0123", False),  # leading zero multi-digit
    ("0700", False),  # octal-like format
    ("0950", False),  # octal-like format 2
    ("00123", False),  # multiple leading zeros
    ("-01", False),  # negative with leading zero
    ("-0123", False),  # negative with leading zeros
    ("-00", False),  # negative double zero
    ("+123", False),  # plus sign
    ("+5", False),  # positive plus sign
    ("+0", False),  # plus zero
    ("", False),  # empty string
    ("-", False),  # just minus sign
    ("+", False),  # just plus sign
    (" ", False),  # single space
    ("   ", False),  # multiple spaces
    (" 123", False),  # leading space
    ("123 ", False),  # trailing space
    ("12 3", False),  # space in middle
    (" 123 ", False),  # spaces around
    ("12.3", False),  # decimal number
    ("0.0", False),  # decimal zero
    ("-12.5", False),  # negative decimal
    ("123.", False),  # trailing dot
    (".123", False),  # leading dot
    ("abc", False),  # alphabetic
    ("12a3", False),  # alphanumeric
    ("a123", False),  # letter at start
    ("123a", False),  # letter at end
    ("ABC", False),  # uppercase letters
    ("12A3", False),  # mixed case
    ("0x123", False),  # hexadecimal
    ("0X123", False),  # hex uppercase
    ("0o777", False),  # octal prefix
    ("0b101", False),  # binary prefix
    ("1e5", False),  # scientific notation
    ("1e-5", False),  # scientific negative exp
    ("1E5", False),  # scientific uppercase
    ("1_000", False),  # underscore separator
    ("1,000", False),  # comma separator
    ("1.000", False),  # period separator
    ("1'000", False),  # apostrophe separator
    ("--123", False),  # double minus
    ("++123", False),  # double plus
    ("+-123", False),  # plus minus
    ("-+123", False),  # minus plus
    ("123-", False),  # minus at end
    ("12-3", False),  # minus in middle
    ("123+", False),  # plus at end
    ("12+3", False),  # plus in middle
    ("\t123", False),  # tab character at start
    ("123\t", False),  # tab character at end
    ("123\n", False),  # newline character
    ("123\r", False),  # carriage return
    ("123\x00", False),  # null character
    ("123\x0b", False),  # vertical tab
    ("123\x0c", False),  # form feed
    ("(123)", False),  # parentheses
    ("[123]", False),  # brackets
    ("{123}", False),  # braces
    ("$123", False),  # dollar sign
    ("123%", False),  # percent sign
    ("#123", False),  # hash
    ("@123", False),  # at sign
    ("&123", False),  # ampersand
    ("*123", False),  # asterisk
    ("12/3", False),  # slash
    ("12\\3", False),  # backslash
    ("12|3", False),  # pipe
    ("12;3", False),  # semicolon
    ("12:3", False),  # colon
    ("12?3", False),  # question mark
    ("12!3", False),  # exclamation
    ("~123", False),  # tilde
    ("`123", False),  # backtick
    ("'123'", False),  # single quote
    ('"123"', False),  # double quote
    ("−123", False),  # unicode minus
    ("１２３", False),  # unicode digit
    ("١٢٣", False),  # arabic digits
    ("一二三", False),  # chinese characters
    ("123⁴", False),  # superscript
    ("123₄", False),  # subscript
]


@pytest.mark.parametrize("value,valid", DECIMAL_INTEGER_CASES)
def test_is_decimal_integer(value: str, valid: bool) -> None:
    errs = decimal_integer_errors(value)
    assert (errs == []) is valid
    if not valid:
        assert errs == (["must be non-empty"] if value == "" else ["must be a valid decimal integer in canonical form"])


def _tol(op: str, value: str) -> list[dict[str, str]]:
    return [{"key": "sla", "operator": op, "value": value, "effect": "NoSchedule"}]


@pytest.mark.parametrize("op", ["Lt", "Gt"])
def test_comparison_operators_are_not_supported_with_the_gate_off(op: str) -> None:
    assert validate_tolerations(_tol(op, "950")) == [
        (
            "spec.tolerations[0].operator",
            "FieldValueNotSupported",
            f'Unsupported value: "{op}": supported values: "Equal", "Exists", "Lt", "Gt"',
        )
    ]


@pytest.mark.parametrize("op", ["Lt", "Gt"])
def test_comparison_operators_with_an_integer_are_valid_with_the_gate_on(op: str) -> None:
    for value in ("950", "0", "-5", "9223372036854775807", "-9223372036854775808"):
        assert validate_tolerations(_tol(op, value), comparison_operators=True) == []


def _value_error(value: str, message: str) -> tuple[str, str, str]:
    return ("spec.tolerations[0].value", "FieldValueInvalid", f'Invalid value: "{value}": {message}')


_CANONICAL = "must be a valid decimal integer in canonical form"


@pytest.mark.parametrize(
    "value,messages",
    [
        # Not canonical, but strconv.ParseInt reads it: one error.
        ("0950", [_CANONICAL]),
        ("+5", [_CANONICAL]),
        ("-0", [_CANONICAL]),
        # Not an integer at all: both checks say so.
        ("high", [_CANONICAL, 'strconv.ParseInt: parsing "high": invalid syntax']),
        ("95.5", [_CANONICAL, 'strconv.ParseInt: parsing "95.5": invalid syntax']),
        ("1_000", [_CANONICAL, 'strconv.ParseInt: parsing "1_000": invalid syntax']),
        ("", ["must be non-empty", 'strconv.ParseInt: parsing "": invalid syntax']),
        # Canonical but past int64.
        ("9223372036854775808", ['strconv.ParseInt: parsing "9223372036854775808": value out of range']),
        ("-9223372036854775809", ['strconv.ParseInt: parsing "-9223372036854775809": value out of range']),
        ("12345678901234567890", ['strconv.ParseInt: parsing "12345678901234567890": value out of range']),
    ],
)
def test_comparison_operator_value_must_be_an_int64_in_canonical_form(value: str, messages: list[str]) -> None:
    assert validate_tolerations(_tol("Gt", value), comparison_operators=True) == [
        _value_error(value, m) for m in messages
    ]


@pytest.mark.parametrize(
    "value,error",
    [
        ("0", None),
        ("-9223372036854775808", None),
        ("9223372036854775807", None),
        ("007", None),  # leading zeros are fine for ParseInt (IsDecimalInteger refuses them)
        ("+1", None),
        ("-", "invalid syntax"),
        ("+", "invalid syntax"),
        ("--1", "invalid syntax"),
        (" 1", "invalid syntax"),
        ("\uff11\uff12\uff13", "invalid syntax"),  # only ASCII digits
        ("18446744073709551616x", "value out of range"),  # ParseUint stops at the overflow first
        ("99999999999999999999999", "value out of range"),
    ],
)
def test_parse_int64_error_is_gos(value: str, error: str | None) -> None:
    got = parse_int64_error(value)
    if error is None:
        assert got is None
    else:
        assert got is not None and got.endswith(": " + error)


def test_unknown_operator_lists_equal_and_exists_gate_or_not() -> None:
    expected = [
        (
            "spec.tolerations[0].operator",
            "FieldValueNotSupported",
            'Unsupported value: "Ge": supported values: "Equal", "Exists"',
        )
    ]
    assert validate_tolerations(_tol("Ge", "1"), comparison_operators=True) == expected
    assert validate_tolerations(_tol("Ge", "1")) == expected


def test_pod_admission_follows_the_gate() -> None:
    pod = make_pod("p").set("spec.tolerations", _tol("Gt", "900")).obj()
    with pytest.raises(APIError, match=r'spec\.tolerations\[0\]\.operator: Unsupported value: "Gt"'):
        admit_new_pod(dict(pod), {})
    admitted = admit_new_pod(make_pod("p").set("spec.tolerations", _tol("Gt", "900")).obj(), {}, ON)
    assert admitted["spec"]["tolerations"][0]["operator"] == "Gt"
    with pytest.raises(APIError, match=r'spec\.tolerations\[0\]\.value: Invalid value: "09"'):
        admit_new_pod(make_pod("p").set("spec.tolerations", _tol("Gt", "09")).obj(), {}, ON)


def test_update_of_a_pod_that_uses_them_stays_valid_with_the_gate_off() -> None:
    # Upstream's allowTaintTolerationComparisonOperators: the old pod uses Lt/Gt.
    old = make_pod("p").set("spec.tolerations", _tol("Lt", "5")).obj()
    new = make_pod("p").set("spec.tolerations", [*_tol("Lt", "5"), *_tol("Gt", "1")]).obj()
    validate_update("Pod", "", old, new)  # no error
    plain = make_pod("p").obj()
    with pytest.raises(APIError, match="Unsupported value"):
        validate_update("Pod", "", plain, new)
