"""What `invoke kits --check` holds every kit to beyond its schema: steps, result paths, images and pins.

Loading a kit already checks its schema, its step kinds and their parameters, the pins its steps need and
the images they name (``reprokit.config.kit``); a kit that fails there stops the check with that error
(exit 2). Here: every step's kind is implemented; every expectation's path starts at a key its step's
result has (the fields of the kind's result model, ``StepKind.result_keys``); every image's Dockerfile exists, builds only from bases pinned by
digest in ``docker/images.lock.yml``, and installs the kit's pins where its requirements lock names them.
The serve steps' flags are checked against the pinned wheel (``flag_problems``): sglang's by
``reprokit.upstream.args``, vLLM's by ``reprokit.upstream.vllm_args``.
"""

from __future__ import annotations

import re
from pathlib import Path

from reprokit.config.kit import Kit
from reprokit.config.yamlfile import load_yaml
from reprokit.errors import ConfigError
from reprokit.images import dockerfile as dockerfile_rules
from reprokit.images.build import REPO_ROOT, arg_defaults, check_requirements_match_pins
from reprokit.images.lockfile import LOCK_PATH, load_lock
from reprokit.step_kinds import STEP_KINDS
from reprokit.step_kinds.base import CONTRACT_FIELDS
from reprokit.upstream.args import kit_flag_problems
from reprokit.upstream.vllm_args import kit_problems as vllm_flag_problems


def _first_key(path: str) -> str:
    return re.split(r"[.\[]", path, maxsplit=1)[0]


def expectation_problems(kit: Kit, path: Path) -> tuple[list[str], int]:
    """Expectations whose path cannot exist in their step's result; and how many paths were checked."""
    doc = load_yaml(path)
    kinds = {step.name: STEP_KINDS[step.uses] for step in kit.steps}
    problems, checked = [], 0
    for index, expectation in enumerate(kit.expect):
        kind = kinds[expectation.step]
        if not kind.result_keys:
            continue  # the kind declares no result keys: nothing to hold the path to
        checked += 1
        key = _first_key(expectation.path)
        if key not in kind.result_keys and key not in CONTRACT_FIELDS:
            problems.append(f"{doc.where(('expect', index, 'path'))}: expectation '{expectation.name}': the result of"
                            f" step '{expectation.step}' ({kind.name}) has no key '{key}'; its keys:"
                            f" {', '.join(kind.result_keys)}")
    return problems, checked


def step_problems(kit: Kit, path: Path) -> list[str]:
    doc = load_yaml(path)
    return [f"{doc.where(('steps', i, 'uses'))}: step '{step.name}' uses '{step.uses}', which this reprokit does not"
            f" implement ({STEP_KINDS[step.uses].not_implemented_reason}); it would never run"
            for i, step in enumerate(kit.steps) if not STEP_KINDS[step.uses].implemented]


def image_problems(kit: Kit, path: Path, repo_root: Path = REPO_ROOT) -> list[str]:
    """Each image: its Dockerfile exists and follows the pinning rules; its requirements lock agrees with the pins."""
    doc = load_yaml(path)
    problems = []
    try:
        lock = load_lock(repo_root / LOCK_PATH)
    except (ConfigError, OSError) as exc:
        return [f"{repo_root / LOCK_PATH}: {exc}"]
    for name, image in kit.images.items():
        where = doc.where(("images", name, "dockerfile"))
        dockerfile = repo_root / image.dockerfile
        if not dockerfile.is_file():
            problems.append(f"{where}: image '{name}': {image.dockerfile} does not exist (relative to {repo_root})")
            continue
        text = dockerfile.read_text(encoding="utf-8")
        problems += [f"{where}: image '{name}': {p}" for p in dockerfile_rules.problems(image.dockerfile, text, lock)]
        if image.target and not re.search(rf"(?im)^FROM\s.+\sAS\s+{re.escape(image.target)}\s*$", text):
            problems.append(f"{where}: image '{name}': {image.dockerfile} has no stage '{image.target}'")
        requirements = image.build_args.get("REQUIREMENTS") or arg_defaults(text).get("REQUIREMENTS")
        if requirements:
            try:
                check_requirements_match_pins(kit, repo_root / requirements, requirements)
            except ConfigError as exc:
                problems.append(f"{where}: image '{name}': {exc}")
            except OSError as exc:
                problems.append(f"{where}: image '{name}': cannot read {requirements}: {exc}")
    return problems


def structure(kit: Kit, path: Path) -> tuple[list[str], str]:
    """Every problem of ``kit`` beyond its schema, and a one-line account of what was checked."""
    problems = step_problems(kit, path)
    found, checked = expectation_problems(kit, path)
    problems += found + image_problems(kit, path)
    undeclared = len(kit.expect) - checked
    summary = (f"{len(kit.steps)} steps of implemented kinds; {checked} expectation paths in their steps' results"
               + (f" ({undeclared} on kinds that declare no result keys)" if undeclared else "")
               + f"; {len(kit.images)} images from pinned bases, agreeing with the pins")
    return problems, summary


def flag_problems(kit: Kit, cache_dir: Path | None = None) -> tuple[list[str], list[str]]:
    """The flags (and vLLM's ``VLLM_*`` variables) of a kit's serve steps against its pinned release: (problems,
    what was checked), sglang's first."""
    vllm_problems, vllm_checked = vllm_flag_problems(kit, cache_dir)
    problems, checked = kit_flag_problems(kit, cache_dir)
    return problems + vllm_problems, checked + vllm_checked
