# -*- coding: utf-8 -*-
# Copyright: kafkaops.mirror contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Selecting topics and groups by whole-name regular expressions, with the option named when a pattern is wrong.

Pattern lists follow MirrorMaker 2's one comma rule (_mm2.patterns): `a,b` is two patterns here as in a mirror flow.
"""
from __future__ import annotations

from ansible_collections.kafkaops.mirror.plugins.module_utils._mm2.patterns import compile_patterns, matches_any, pattern_problems

# Messages for the patterns that do not compile, naming the option (the one check, shared with the MM2 modules).
regex_problems = pattern_problems


class NameFilter:
    """Keeps names that fully match one of `include` (all names when empty) and none of `exclude`."""

    def __init__(self, include=None, exclude=None):
        self.include = compile_patterns(include, "include")
        self.exclude = compile_patterns(exclude, "exclude")

    def __call__(self, name):
        if self.include and not matches_any(name, self.include):
            return False
        return not matches_any(name, self.exclude)

    def select(self, names):
        return sorted(name for name in names if self(name))
