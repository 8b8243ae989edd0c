# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Selecting topics and groups by whole-name regular expressions, with the option named when a pattern is wrong."""
from __future__ import annotations

import re


def regex_problems(option, patterns):
    """Messages for the patterns that do not compile, naming the option."""
    problems = []
    for pattern in patterns or []:
        try:
            re.compile(pattern)
        except re.error as exc:
            problems.append(f"{option}: {pattern!r} is not a regular expression ({exc})")
    return problems


class NameFilter:
    """Keeps names that fully match one of `include` (all names when empty) and none of `exclude`."""

    def __init__(self, include=None, exclude=None):
        self.include = [re.compile(pattern) for pattern in include or []]
        self.exclude = [re.compile(pattern) for pattern in exclude or []]

    def __call__(self, name):
        if self.include and not any(pattern.fullmatch(name) for pattern in self.include):
            return False
        return not any(pattern.fullmatch(name) for pattern in self.exclude)

    def select(self, names):
        return sorted(name for name in names if self(name))
