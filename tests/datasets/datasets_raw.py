"""Oracle for the loaders: read the shipped raw files with the standard library only."""

import csv
import gzip
import io
from pathlib import Path

import fairot.datasets

SHIPPED = Path(fairot.datasets.__file__).parent / "data"
SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"

# SHA-256 of the publisher's files, copied from ../shared/data/SOURCES.md (and SHA256SUMS).
SOURCES_SHA256 = {
    "adult.data": "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
    "adult.test": "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
    "german.data": "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
    "communities.data": "09e0b5c07eae24c1efab19b2edee05e160e7f5743b6f31e31eec3d73624da2ea",
    "communities.names": "f71e9049d2a8efe566e41be59cae27c84282a8d9d5c4bce4861490227f42c429",
    "national2018.csv": "d3f9b74f95d4bd55add179957812c3cd46756be1fd58f565a9ef53522cb4ce3a",
    "national2019.csv": "9e039c8e47c9e998d60f66fd50ec620fc2d0703decdc21f3069c9844fbef979b",
    "ma2018.csv": "067b99e8180a6b8149d03fa31b5a29aa6d9ff66a9173e6425915d46a4bb77cad",
    "tx2018.csv": "f6a6d7ba4f845b168a6e1d8ee869c11ea156abe4221f2abb1d2bddb50fe7d0fa",
    "data_dictionary.json": "16a170c50b89ea15b41826ca439ac971345f1a545e17278e2bdfa891fe7b56e8",
}
SUBDIRS = {
    "adult.data": "adult",
    "adult.test": "adult",
    "german.data": "german_credit",
    "communities.data": "communities_crime",
    "communities.names": "communities_crime",
    "national2018.csv": "acs_nist",
    "national2019.csv": "acs_nist",
    "ma2018.csv": "acs_nist",
    "tx2018.csv": "acs_nist",
    "data_dictionary.json": "acs_nist",
}


def shipped_bytes(name: str) -> bytes:
    return gzip.decompress((SHIPPED / f"{name}.gz").read_bytes())


def shipped_rows(name: str, *, delimiter: str = ",", skip: int = 0) -> list[list[str]]:
    """Records of a shipped file, fields stripped, blank lines dropped."""
    text = shipped_bytes(name).decode("ascii")
    lines = text.splitlines()[skip:]
    reader = csv.reader(io.StringIO("\n".join(lines)), delimiter=delimiter)
    return [[field.strip() for field in row] for row in reader if row]
