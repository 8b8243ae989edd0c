# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
from mirror_validation.fingerprint import DIGEST_SIZE, record_fingerprint


def test_same_record_same_fingerprint_and_size():
    first = record_fingerprint(b"k", b"v", [("h", b"1")], 1700000000000)
    assert first == record_fingerprint(b"k", b"v", [("h", b"1")], 1700000000000)
    assert len(first) == DIGEST_SIZE


def test_header_order_does_not_matter_but_header_content_does():
    assert record_fingerprint(b"k", b"v", [("a", b"1"), ("b", b"2")]) == record_fingerprint(b"k", b"v", [("b", b"2"), ("a", b"1")])
    assert record_fingerprint(b"k", b"v", [("a", b"1")]) != record_fingerprint(b"k", b"v", [("a", b"2")])
    assert record_fingerprint(b"k", b"v", [("a", None)]) != record_fingerprint(b"k", b"v", [("a", b"")])


def test_field_boundaries_and_nulls_are_part_of_the_identity():
    assert record_fingerprint(b"ab", b"c") != record_fingerprint(b"a", b"bc")
    assert record_fingerprint(None, b"v") != record_fingerprint(b"", b"v")
    assert record_fingerprint(b"k", None) != record_fingerprint(b"k", b"")


def test_timestamp_only_counts_when_given():
    assert record_fingerprint(b"k", b"v", timestamp=1) != record_fingerprint(b"k", b"v", timestamp=2)
    assert record_fingerprint(b"k", b"v", timestamp=1) != record_fingerprint(b"k", b"v")


def test_fingerprints_are_stable_across_versions():
    """Pinned digests: a change here would make reports of two job versions disagree on the same data."""
    assert record_fingerprint(b"key-1", b"value 1", [("n", b"1"), ("origin", None), ("a", "text")], 1700000000000).hex() == (
        "ca34fdabeb3bd7764adeef83ec44243d")
    assert record_fingerprint(None, None).hex() == "9b0103cbacb07349c059e04fd8ac359a"
