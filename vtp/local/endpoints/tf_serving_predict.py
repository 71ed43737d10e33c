"""TensorFlow Serving's REST `predict`, in the row format, over a loaded SavedModel's signature.

What Vertex's prebuilt TensorFlow prediction images answer (they run TF Serving on the model):

    POST {"instances": [...], "signature_name": "serving_default"}  ->  {"predictions": [...]}

- A signature with one input takes each instance as that input's value; one with several takes
  each instance as an object naming every input.
- A signature with one output answers one value per instance; one with several, an object per
  instance naming every output. Strings (tf.string) come back as text.
- `signature_name` is optional (`serving_default`). TF Serving's columnar format (`inputs`) is
  not served here: a body with it is a 400 that says so.

Every malformed body is a BadRequest naming the field; TensorFlow is imported by the caller
(the server runs on an interpreter that has it) and handed in, so this module imports none.
"""

from typing import Any

from vtp.trainer.predict import BadRequest

DEFAULT_SIGNATURE = "serving_default"


class SignaturePredictor:
    """Predictions from the signatures of a SavedModel loaded with `tf.saved_model.load`."""

    def __init__(self, tf: Any, loaded: Any) -> None:
        self.tf = tf
        self.signatures = dict(loaded.signatures)
        self._loaded = loaded  # the signatures' variables live as long as it does

    def predict(self, body: Any) -> list[Any]:
        """One prediction per instance of `body`; BadRequest naming what is wrong with it."""
        if not isinstance(body, dict):
            raise BadRequest("the body must be a JSON object with a list of 'instances'")
        if "inputs" in body:
            raise BadRequest(
                "inputs: TF Serving's columnar format is not served locally; send 'instances' "
                "(the row format)"
            )
        instances = body.get("instances")
        if not isinstance(instances, list) or not instances:
            raise BadRequest("instances: a non-empty list of prediction inputs is required")
        name = body.get("signature_name", DEFAULT_SIGNATURE)
        if not isinstance(name, str) or name not in self.signatures:
            known = ", ".join(sorted(self.signatures)) or "none"
            raise BadRequest(
                f"signature_name: the model has no signature {name!r} (it has {known})"
            )
        function = self.signatures[name]
        specs = function.structured_input_signature[1]
        outputs = function(**self._tensors(specs, instances))
        return _rows({key: value.numpy() for key, value in outputs.items()}, len(instances))

    def _tensors(self, specs: dict[str, Any], instances: list[Any]) -> dict[str, Any]:
        """The signature's inputs, one tensor each, batched from the instances."""
        columns: dict[str, list[Any]] = {key: [] for key in specs}
        for index, instance in enumerate(instances):
            if len(specs) == 1 and not isinstance(instance, dict):
                instance = {next(iter(specs)): instance}
            if not isinstance(instance, dict) or set(instance) != set(specs):
                raise BadRequest(
                    f"instances[{index}]: an object with the inputs {', '.join(sorted(specs))} "
                    "is required"
                )
            for key in specs:
                columns[key].append(instance[key])
        tensors = {}
        for key, spec in specs.items():
            try:
                tensors[key] = self.tf.constant(columns[key], dtype=spec.dtype)
            except (TypeError, ValueError) as exc:
                raise BadRequest(
                    f"instances[].{key}: not a {spec.dtype.name} value: {exc}"
                ) from None
            if not spec.shape.is_compatible_with(tensors[key].shape):
                raise BadRequest(
                    f"instances[].{key}: shape {tensors[key].shape.as_list()[1:]} where the "
                    f"signature takes {spec.shape.as_list()[1:]}"
                )
        return tensors


def _rows(outputs: dict[str, Any], count: int) -> list[Any]:
    """The outputs (numpy arrays, batch first) as one prediction per instance."""
    values = {key: _plain(array.tolist()) for key, array in outputs.items()}
    if any(not isinstance(v, list) or len(v) != count for v in values.values()):
        raise RuntimeError("the signature's outputs are not batched like its inputs")
    if len(values) == 1:
        return next(iter(values.values()))
    return [{key: column[i] for key, column in values.items()} for i in range(count)]


def _plain(value: Any) -> Any:
    """`value` with bytes (tf.string) as text, as TF Serving's JSON has them."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
