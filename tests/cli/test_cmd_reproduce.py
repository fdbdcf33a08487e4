"""``fairot reproduce``: a study without its extra ends in one line naming the extra."""


def test_reproduce_without_the_extra_is_one_line(monkeypatch, capsys):
    import importlib.util

    from fairot.cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "fairlearn" else real(name, *args),
    )
    assert main(["reproduce", "frontier", "--quick"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "fairot reproduce: error: the study 'frontier' needs fairlearn, which is not installed: "
        'pip install "fairot[studies]".'
    ]
