# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whole-name pattern lists as MirrorMaker 2 reads them (topics, topics.exclude, groups, groups.exclude).

The one comma rule: a pattern string holds several patterns separated by commas, with the blanks around each comma
ignored, exactly as Kafka's ConfigDef reads a LIST value (COMMA_WITH_WHITESPACE `\\s*,\\s*`) before
MirrorUtils.compilePatternList joins the items with `|`. A YAML list is the same as its items joined by commas (the
mirrormaker2 role renders it that way), so `["a,b"]` is two patterns everywhere. A regex needing a comma (`x{1,3}`)
cannot be written for MirrorMaker 2 either. Each pattern matches the whole name (Matcher.matches()).

MirrorMaker 2's default topics.exclude changed in 4.0 (KIP-1074): both lists are here, selection.default_topics_exclude
chooses by release.

Self-contained (standard library only): the validation job gets a generated copy (see _mm2/__init__.py).
"""
from __future__ import annotations

import re

# DefaultTopicFilter.TOPICS_EXCLUDE_DEFAULT (TOPICS_BLACKLIST_DEFAULT before 2.7) from 2.4.0 to 3.9: every `*.internal` and
# `*-internal` name; from 4.0 (KIP-1074, KAFKA-17200) only MM2's own `mm2*.internal` ones. selection.default_topics_exclude
# picks one by the release that runs MirrorMaker 2.
DEFAULT_TOPICS_EXCLUDE = (r".*[\-\.]internal", r".*\.replica", r"__.*")
DEFAULT_TOPICS_EXCLUDE_4 = (r"mm2.*\.internal", r".*\.replica", r"__.*")
# DefaultGroupFilter.GROUPS_EXCLUDE_DEFAULT, the same from 2.4.0 to 4.x.
DEFAULT_GROUPS_EXCLUDE = (r"console-consumer-.*", r"connect-.*", r"__.*")

_COMMA_WITH_WHITESPACE = re.compile(r"\s*,\s*")


def split_patterns(patterns):
    """The pattern strings of a comma-separated string, a list of such strings, or None (no patterns)."""
    if patterns is None:
        return []
    items = [patterns] if isinstance(patterns, str) else list(patterns)
    result = []
    for item in items:
        text = str(item).strip()
        if text:
            result.extend(part for part in _COMMA_WITH_WHITESPACE.split(text) if part)
    return result


def pattern_problems(option, patterns):
    """One message per pattern that is not a regular expression, naming the option it came from."""
    problems = []
    for pattern in split_patterns(patterns):
        try:
            re.compile(pattern)
        except re.error as exc:
            problems.append("%s: %r is not a regular expression (%s)" % (option, pattern, exc))
    return problems


def compile_patterns(patterns, option="patterns"):
    """Compiled patterns (see split_patterns); ValueError names the option and every bad pattern."""
    problems = pattern_problems(option, patterns)
    if problems:
        raise ValueError("; ".join(problems))
    return tuple(re.compile(pattern) for pattern in split_patterns(patterns))


def matches_any(name, compiled):
    """True when one of the compiled patterns matches the whole name."""
    return any(pattern.fullmatch(name) for pattern in compiled)


def alternation(patterns):
    """The patterns as one regex string `(?:a)|(?:b)`, for tools that take a single regex; '' when there are none."""
    return "|".join("(?:%s)" % pattern for pattern in split_patterns(patterns))
