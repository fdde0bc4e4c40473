"""What a step kind declares: one ``StepKind`` per module of this package (``KIND``), read by the kit schema, the
planner, ``invoke kits --check`` and the report, so that none of them knows a kind by name.

A kind says where it runs (``host``: a workload module executed on the GPU host, natively or in the kit's
container; ``control``: a control-plane module run on pulled-back artifacts), which pins it needs, whether it
needs a CUDA device, and whether this version of reprokit implements it yet. A kit may declare steps that are
not implemented yet: the run reports them as not run, and the expectations on them as INCONCLUSIVE.

It declares what it consumes (``inputs``): files of an earlier step's ``outputs`` or of the control machine's
cache. The planner resolves them on the control machine, the executor stages them on the host (sha256
verified) and hands the workload their host-side paths; a missing input is a reason not to run, naming it.
``host_paths`` are parameters naming paths that must already exist on the host (the model).

Its ``result`` model types the top-level fields of its ``result.json`` (and, as ``Part``s, the nested objects its
sections read) and is checked when the result is read back. What the kind draws in ``report.md`` and
``report.html`` is not here: its sections (``reprokit/report/kind_sections/``) read that model by field, so the kit schema,
which reads these declarations, loads no drawing code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pydantic

from reprokit.errors import ConfigError


@dataclass(frozen=True)
class Output:
    """Files a step of the kind leaves in its directory (a glob inside it); a later step's input names one."""

    files: str
    summary: str


RESULT_JSON = Output("result.json", "the step's result, checked against the kind's result model when read back")


@dataclass(frozen=True)
class StepInput:
    """A file a step consumes; its host-side path reaches the workload as parameter ``param``.

    ``from_step``: the kind of an earlier step whose output it is (``files``: globs among that kind's declared
    outputs); the kit's last earlier step of that kind produces it, or the one parameter ``step_param`` names.
    ``from_control``: an artifact of the control machine's cache (``reprokit/plan/inputs.py`` says which).
    ``optional``: a kit without a producing step runs the step without it.
    """

    param: str
    summary: str
    from_step: str | None = None
    files: tuple[str, ...] = ("result.json",)
    step_param: str | None = None
    from_control: str | None = None
    optional: bool = False


@dataclass(frozen=True)
class HostPath:
    """A parameter that names a path on the host which must exist before the step starts."""

    param: str
    variable: str  # the inventory variable that points the host at it
    absolute_only: bool = True  # a value without a leading "/" is not a host path (e.g. a hub id)


@dataclass(frozen=True)
class PinParam:
    """A parameter the planner fills from the kit's pins when the step's ``with:`` leaves it out: from the pin
    ``pin``, or from the pin that the parameter ``pin_named_by`` names (triton-smem's ``package``)."""

    param: str
    pin: str | None = None
    pin_named_by: str | None = None


class Result(pydantic.BaseModel):
    """The contract's fields of every ``result.json``; a kind's model adds its own top-level fields.

    Strict types, so a workload that writes ``"3"`` for a count is caught where its result is read back. Keys
    beyond the declared ones are kept: a failing workload adds its error's details (``tried``, ``compile_log``).
    """

    model_config = pydantic.ConfigDict(extra="allow", strict=True, frozen=True, defer_build=True)  # built when first read

    workload: str | None = None
    schema_version: int | None = None
    status: str
    error: str | None = None


CONTRACT_FIELDS = tuple(Result.model_fields)


def _number(value: Any) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("Input should be a valid number")
    return value


# a figure kept as the workload wrote it: an int stays an int (a float field would print 3 as "3.0")
Number = Annotated[Any, pydantic.PlainValidator(_number)]


class Part(pydantic.BaseModel):
    """A nested object of a result that the report reads (a row, a launch, a benchmark): strict on the fields a
    kind's module declares, its other keys kept; checked with the result, so a wrong one names its path."""

    model_config = pydantic.ConfigDict(extra="allow", strict=True, frozen=True, defer_build=True)


def given(value: Any, default: Any) -> Any:
    """``value``, or ``default`` where the result has none (a missing field and a null read the same)."""
    return default if value is None else value


class ResultError(ConfigError, ValueError):
    """A result that does not match its kind's model; the message is one line naming the file and the field.

    A ``ConfigError`` (exit 2, bad input) where a front end meets it (``invoke smem``, ``bisect``); the runner
    and the report catch it first and make it the step's error."""


@dataclass(frozen=True)
class StepKind:
    name: str
    where: Literal["host", "control"]
    summary: str
    order: int  # where `invoke kits` and the messages list it: the order a kit usually runs the kinds
    # host: the workload module run as `python -m <module>`; control: the control-plane module whose
    # `run_step(params, record_dir, steps, out_dir)` runs the step on the pulled-back record
    module: str | None = None
    needs_gpu: bool = False
    needs_pins: tuple[str, ...] = ()
    implemented: bool = False
    not_implemented_reason: str = ""
    default_timeout_s: int = 600
    param_keys: tuple[str, ...] = ()  # accepted keys of the step's `with:`
    # the parameters a kit must give, and what each is (the workload would stop on its host without it: the kit, a
    # --set and the dry run refuse it before anything runs)
    required_params: tuple[tuple[str, str], ...] = ()
    # the workload's own defaults (its DEFAULTS): a value given in place of one must be of the same type (a number
    # for a number), so that `--set serve.tp=abc` is refused up front rather than by the host
    param_defaults: tuple[tuple[str, Any], ...] = ()
    inputs: tuple[StepInput, ...] = ()
    outputs: tuple[Output, ...] = (RESULT_JSON,)
    host_paths: tuple[HostPath, ...] = ()
    pin_params: tuple[PinParam, ...] = ()
    model_config_param: str | None = None  # a parameter naming kits/models/<name>.yml, passed as `model_config`
    host_arch_param: str | None = None  # a parameter whose value `host` becomes the host's one GPU architecture
    optin_limit_param: str | None = None  # filled with the probed opt-in smem limit of the GPUs of that arch
    gpu_count_param: str | None = None  # a parameter whose value `host` (or absence) becomes the host's GPU count
    result: type[Result] = Result

    @property
    def result_keys(self) -> tuple[str, ...]:
        """The top-level keys of the result beyond the contract's: what `invoke kits --check` holds a path to."""
        return tuple(field.alias or name for name, field in self.result.model_fields.items() if name not in CONTRACT_FIELDS)

    def read_result(self, data: Any, where: str) -> Result:
        """``data`` (a parsed ``result.json`` at ``where``) as this kind's model, or a one-line ``ResultError``."""
        try:
            return self.result.model_validate(data)
        except pydantic.ValidationError as exc:
            error = exc.errors()[0]
            field = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"]).lstrip(".")
            got = "nothing" if error["type"] == "missing" else repr(error.get("input"))
            got = got if len(got) <= 60 else got[:57] + "..."
            source = self.result.__module__.replace(".", "/") + ".py"
            message = str(error["ctx"]["error"]) if error["type"] == "value_error" else error["msg"]  # a Number's own
            raise ResultError(f"{where}: {f'field {field!r}' if field else 'the result'}: {message} (got {got});"
                              f" the {self.name} result model ({source}) says what each field holds") from None
