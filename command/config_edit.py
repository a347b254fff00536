"""Take Stowage's settings out of ``config.yaml`` by editing only the spans that name Stowage.

Re-dumping the parsed YAML loses the user's comments, anchors, key order,
flow style and line endings.  Instead the text is composed with PyYAML
(which records where each node starts and ends) and only those spans are
cut or replaced: the ``stowage`` item of ``plugins.enabled`` or
``plugins.disabled`` (its whole line in block style, the item and one comma
in flow style), the ``plugins.entries.stowage`` pair, ``context.engine``'s
value, with a purge the top-level ``stowage:`` block, and each host cap still
at the value ``stowage setup`` set (under the built-in compressor a 10,000,000-
character output would go whole into the prompt: the host's default cut comes
back).  Every other byte is kept.  The result is parsed again and must equal the old data minus those
keys; when it does not (an anchor shared with other keys, a key on the same
line as another), nothing is written and the caller names the lines to edit
by hand.  Pure: text in, text out.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Iterable

import yaml

from .identity import PLUGIN_KEY

COMPRESSOR = "compressor"


class ConfigEditError(ValueError):
    """The edit could not be made without touching other settings; nothing was changed."""


@dataclass(frozen=True)
class _Cut:
    start: int
    end: int
    text: str = ""


Lifted = Iterable[tuple[str, int]]  # (dotted key, the value `stowage setup` sets) of the host's output caps


def _is_lifted(value: Any, lifted: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, str)) and str(value).strip() == str(lifted)


def _drop_lifted(config: dict[str, Any], lifted: Lifted) -> list[str]:
    """Take out each cap key still at Stowage's value (and a section it leaves empty); what changed."""
    changes = []
    for key, value in lifted:
        *parents, leaf = key.split(".")
        chain: list[dict[str, Any]] = [config]
        for name in parents:
            child = chain[-1].get(name)
            if not isinstance(child, dict):
                break
            chain.append(child)
        else:
            if leaf in chain[-1] and _is_lifted(chain[-1][leaf], value):
                del chain[-1][leaf]
                changes.append(f"{key}: back to Hermes's default (was {value:,}, set by `stowage setup`)")
                for name, holder in zip(reversed(parents), reversed(chain[:-1]), strict=True):
                    if holder[name]:
                        break
                    del holder[name]
    return changes


def config_without_stowage(raw: dict[str, Any], purge: bool, lifted: Lifted = ()) -> tuple[dict[str, Any], list[str]]:
    """The config's data with every setting that names Stowage taken out, and what changed (pure)."""
    config = copy.deepcopy(raw) if raw else {}
    changes: list[str] = _drop_lifted(config, lifted)
    context = config.get("context")
    if isinstance(context, dict) and str(context.get("engine", "")).strip().lower() == PLUGIN_KEY:
        context["engine"] = COMPRESSOR
        changes.append("context.engine: compressor (Hermes's built-in compressor)")
    plugins = config.get("plugins")
    if isinstance(plugins, dict):
        for key in ("enabled", "disabled"):
            names = plugins.get(key)
            if isinstance(names, str):
                names = [names]
            if isinstance(names, list) and PLUGIN_KEY in names:
                plugins[key] = [n for n in names if n != PLUGIN_KEY]
                changes.append(f"plugins.{key}: {PLUGIN_KEY} removed")
        entries = plugins.get("entries")
        if isinstance(entries, dict) and PLUGIN_KEY in entries:
            del entries[PLUGIN_KEY]
            changes.append(f"plugins.entries.{PLUGIN_KEY} removed")
            if not entries:
                del plugins["entries"]
    if purge and "stowage" in config:
        del config["stowage"]
        changes.append("the stowage: block removed")
    return config, changes


def _pair(mapping: yaml.Node | None, key: str) -> tuple[int, yaml.Node, yaml.Node] | None:
    """The last pair of ``mapping`` whose key is ``key`` (the one a loader keeps): (index, key node, value node)."""
    if not isinstance(mapping, yaml.MappingNode):
        return None
    found = None
    for number, (k, v) in enumerate(mapping.value):
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            found = (number, k, v)
    return found


def _content_end(node: yaml.Node) -> int:
    """Where a node's own text ends: a block collection's end mark runs on over the comments after it."""
    if isinstance(node, yaml.MappingNode) and not node.flow_style and node.value:
        return _content_end(node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value:
        return _content_end(node.value[-1])
    return node.end_mark.index


def _line_start(text: str, at: int) -> int:
    return text.rfind("\n", 0, at) + 1


def _line_end(text: str, at: int) -> int:
    """Just past the line break of the line holding ``at`` (a CRLF's ``\\r`` is before the ``\\n``)."""
    found = text.find("\n", at)
    return len(text) if found < 0 else found + 1


def _whole_lines(text: str, start: int, end: int, lead: str) -> _Cut:
    """Cut the lines from ``start`` to ``end``, when only indentation (and ``lead``, a ``-``) precedes ``start``."""
    begin = _line_start(text, start)
    if text[begin:start].strip(" \t").strip(lead).strip(" \t"):
        raise ConfigEditError(f"line {text.count(chr(10), 0, start) + 1} holds another setting before Stowage's")
    return _Cut(begin, _line_end(text, end))


def _flow(node: yaml.Node) -> bool:
    return bool(getattr(node, "flow_style", False))


def _cut_item(text: str, parent: yaml.Node, number: int) -> _Cut:
    """Cut item ``number`` of a sequence, or pair ``number`` of a mapping, in block or flow style."""
    items = parent.value
    spans = [
        (item[0].start_mark.index, _content_end(item[1]))
        if isinstance(item, tuple)
        else (item.start_mark.index, _content_end(item))
        for item in items
    ]
    start, end = spans[number]
    if not _flow(parent):
        return _whole_lines(text, start, end, "-" if isinstance(parent, yaml.SequenceNode) else "")
    if number + 1 < len(spans):  # `a, stowage, b` -> `a, b`
        return _Cut(start, spans[number + 1][0])
    if number > 0:  # `a, stowage` -> `a`
        return _Cut(spans[number - 1][1], end)
    return _Cut(start, end)  # `[stowage]` -> `[]`


def _empty_list(text: str, key: yaml.Node, value: yaml.Node) -> _Cut:
    """``enabled: [stowage]`` or its block form, or ``enabled: stowage``, becomes ``enabled: []``."""
    if _flow(value) or isinstance(value, yaml.ScalarNode):
        return _Cut(value.start_mark.index, value.end_mark.index, "[]")
    colon = text.find(":", key.end_mark.index)
    return _Cut(colon, _content_end(value), ": []")


def _lifted_cuts(text: str, root: yaml.Node, lifted: Lifted) -> list[_Cut]:
    """Cut each cap pair at Stowage's value; the highest section it would leave empty goes instead."""
    cuts = []
    for key, value in lifted:
        chain: list[tuple[int, yaml.Node, yaml.Node]] = []
        node: yaml.Node | None = root
        for name in key.split("."):
            found = _pair(node, name)
            if found is None:
                break
            chain.append(found)
            node = found[2]
        else:
            if not (isinstance(node, yaml.ScalarNode) and _is_lifted(node.value, value)):
                continue
            depth = len(chain) - 1  # the pair to cut: the cap's, or the highest section holding nothing else
            while depth > 0 and len(chain[depth - 1][2].value) == 1:
                depth -= 1
            parent = root if depth == 0 else chain[depth - 1][2]
            cuts.append(_cut_item(text, parent, chain[depth][0]))
    return cuts


def _cuts(text: str, root: yaml.Node, purge: bool, lifted: Lifted = ()) -> list[_Cut]:
    cuts: list[_Cut] = _lifted_cuts(text, root, lifted)
    context = _pair(root, "context")
    engine = _pair(context[2], "engine") if context else None
    if engine and isinstance(engine[2], yaml.ScalarNode) and engine[2].value.strip().lower() == PLUGIN_KEY:
        cuts.append(_Cut(engine[2].start_mark.index, engine[2].end_mark.index, COMPRESSOR))
    plugins = _pair(root, "plugins")
    if plugins:
        for name in ("enabled", "disabled"):
            found = _pair(plugins[2], name)
            if not found:
                continue
            _, key, value = found
            if isinstance(value, yaml.ScalarNode) and value.value == PLUGIN_KEY:
                cuts.append(_empty_list(text, key, value))
            elif isinstance(value, yaml.SequenceNode):
                ours = [
                    n
                    for n, item in enumerate(value.value)
                    if isinstance(item, yaml.ScalarNode) and item.value == PLUGIN_KEY
                ]
                if ours and len(ours) == len(value.value):
                    cuts.append(_empty_list(text, key, value))
                else:
                    cuts += [_cut_item(text, value, n) for n in ours]
        entries = _pair(plugins[2], "entries")
        ours_entry = _pair(entries[2], PLUGIN_KEY) if entries else None
        if entries and ours_entry:
            if len(entries[2].value) == 1:  # the last entry: the entries key goes too, as Hermes would leave it
                cuts.append(_cut_item(text, plugins[2], entries[0]))
            else:
                cuts.append(_cut_item(text, entries[2], ours_entry[0]))
    block = _pair(root, "stowage") if purge else None
    if block:
        cuts.append(_cut_item(text, root, block[0]))
    return cuts


def edit_out_stowage(text: str, purge: bool, lifted: Lifted = ()) -> tuple[str, list[str]]:
    """``text`` with Stowage's settings cut out, and what changed; ``ConfigEditError`` if not safely possible.

    *lifted* names the host's output caps with the value ``stowage setup`` sets: one still at it goes back to
    Hermes's default.
    """
    lifted = tuple(lifted)
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        raise ConfigEditError(f"the file does not parse: {exc}") from exc
    if not isinstance(data, dict) or not isinstance(root, yaml.MappingNode):
        return text, []
    expected, changes = config_without_stowage(data, purge, lifted)
    if not changes:
        return text, []
    try:
        cuts = sorted(_cuts(text, root, purge, lifted), key=lambda c: c.start, reverse=True)
    except ConfigEditError as exc:
        raise ConfigEditError(f"{exc}: " + "; ".join(changes)) from None
    edited, last_start = text, len(text) + 1
    for cut in cuts:
        if cut.end > last_start:
            raise ConfigEditError("Stowage's settings overlap in the file: " + "; ".join(changes))
        edited, last_start = edited[: cut.start] + cut.text + edited[cut.end :], cut.start
    try:
        after = yaml.safe_load(edited)
    except yaml.YAMLError:
        after = None
    if (after if after is not None else {}) != expected:
        raise ConfigEditError(
            "an edit of only Stowage's lines would change other settings (an anchor or alias they share?): "
            + "; ".join(changes)
        )
    return edited, changes
