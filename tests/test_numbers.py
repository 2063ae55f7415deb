from esrp_report.model.numbers import fmt_number, fmt_percent


def test_half_up_on_the_printed_decimal_not_binary() -> None:
    assert fmt_number(2.0005, 3) == "2.001"  # binary 2.0005 is 2.000499999..., documents round it up
    assert fmt_number(14.9605, 2) == "14.96"
    assert fmt_number(14422.4, 3, thousands=True) == "14,422.400"
    assert fmt_number(None, 3) == "—"
    assert fmt_percent(0.12345) == "12.3%"
