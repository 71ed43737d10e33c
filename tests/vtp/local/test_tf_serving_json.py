"""TF Serving's REST predict JSON to and from arrays (`vtp/local/endpoints/tf_serving_json.py`):
pure, numpy only, no TensorFlow. The row and columnar formats as TF Serving's api_rest documents
them, a signature chosen by name, and every body it cannot take refused naming the field."""

import json
import math

import numpy
import pytest

from vtp.local.endpoints.tf_serving_json import (
    RequestError,
    TensorSpec,
    make_response,
    parse_request,
)

PENGUINS = {
    "island": TensorSpec("string", (None,)),
    "culmen_length_mm": TensorSpec("float32", (None,)),
    "culmen_depth_mm": TensorSpec("float32", (None,)),
    "flipper_length_mm": TensorSpec("float32", (None,)),
    "body_mass_g": TensorSpec("float32", (None,)),
    "sex": TensorSpec("string", (None,)),
}
SIGNATURES = {
    "serving_default": {"rows": TensorSpec("float32", (None, 2))},
    "predict": PENGUINS,
    "counts": {"n": TensorSpec("int32", None), "flag": TensorSpec("bool", (None,))},
    "image": {"image_bytes": TensorSpec("string", (None,))},
}
SAMPLE = {  # get_started_with_raw_predict's body
    "signature_name": "predict",
    "instances": [
        {
            "island": "DREAM",
            "culmen_length_mm": 36.6,
            "culmen_depth_mm": 18.4,
            "flipper_length_mm": 184.0,
            "body_mass_g": 3475.0,
            "sex": "FEMALE",
        }
    ],
}


def refused(body: object) -> str:
    with pytest.raises(RequestError) as caught:
        parse_request(body, SIGNATURES)
    return str(caught.value)


def test_the_row_format_batches_instances_of_the_default_signature() -> None:
    request = parse_request({"instances": [[1, 2.5], [3, 4]]}, SIGNATURES)
    assert (request.signature, request.row) == ("serving_default", True)
    (rows,) = request.inputs.values()
    assert rows.dtype == numpy.float32 and rows.tolist() == [[1.0, 2.5], [3.0, 4.0]]


def test_the_samples_body_names_every_input_of_the_signature_it_chooses() -> None:
    request = parse_request(SAMPLE, SIGNATURES)
    assert request.signature == "predict" and set(request.inputs) == set(PENGUINS)
    assert request.inputs["island"].dtype == object
    assert request.inputs["island"].tolist() == [b"DREAM"]
    assert request.inputs["culmen_length_mm"].tolist() == [pytest.approx(36.6)]
    assert request.inputs["culmen_length_mm"].shape == (1,)


def test_the_columnar_format_takes_whole_tensors() -> None:
    request = parse_request({"inputs": [[1, 2], [3, 4], [5, 6]]}, SIGNATURES)
    assert not request.row and request.inputs["rows"].shape == (3, 2)
    named = parse_request(
        {"signature_name": "counts", "inputs": {"n": [[1, 2, 3]], "flag": [True, False]}},
        SIGNATURES,
    )
    assert named.inputs["n"].dtype == numpy.int32 and named.inputs["n"].shape == (1, 3)
    assert named.inputs["flag"].tolist() == [True, False]  # batch sizes need not agree


def test_binary_strings_come_as_b64_objects() -> None:
    body = {"signature_name": "image", "instances": [{"b64": "aW1hZ2UgYnl0ZXM="}, "text"]}
    assert parse_request(body, SIGNATURES).inputs["image_bytes"].tolist() == [
        b"image bytes",
        b"text",
    ]
    body["instances"] = [{"b64": "not base64!"}]
    assert refused(body).startswith("instances[0]: its 'b64' is not base64")


def test_nan_and_infinity_are_floats_whole_numbers_are_not_booleans() -> None:
    body = json.loads('{"instances": [[NaN, Infinity], [-Infinity, 1]]}')
    rows = parse_request(body, SIGNATURES).inputs["rows"]
    assert math.isnan(rows[0, 0]) and rows[0, 1] == math.inf and rows[1, 0] == -math.inf
    assert refused({"instances": [[True, 1.0]]}).startswith(
        "instances[0][0]: the boolean true where a number (float32) is expected"
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([1, 2], "the body must be a JSON object with 'instances'"),
        ({"signature_name": 3, "instances": [[1, 2]]}, "signature_name: must be a string"),
        (
            {"signature_name": "nope", "instances": [[1, 2]]},
            "signature_name: the model has no signature 'nope' (it has counts, image, predict,",
        ),
        ({"instances": [[1, 2]], "inputs": [[1, 2]]}, "instances, inputs: send one of them"),
        ({"parameters": {}}, "instances: missing; send 'instances' (the row format) or 'inputs'"),
        ({"instances": {"rows": [1, 2]}}, "instances: must be a list, not an object"),
        ({"instances": []}, "instances: the list is empty"),
        ({"instances": [[1, 2], [3]]}, "instances[1]: shape [1] where instances[0] has [2]"),
        ({"instances": [[1, 2], {"rows": [1, 2]}]}, "instances[1]: a value (not an object)"),
        ({"instances": [[1, "2"]]}, "instances[0][1]: the string '2' where a number (float32)"),
        ({"instances": [[1, [2]]]}, "instances[0][1]: a list where a value is expected"),
        ({"instances": [[1, 2, 3]]}, "instances: the input rows of the instances, batched, has "),
        ({"inputs": [1, 2]}, "inputs.rows: shape [2] where the signature takes [-1, 2]"),
        (
            {"signature_name": "predict", "instances": [1.0]},
            "instances[0]: an object naming the inputs body_mass_g, culmen_depth_mm,",
        ),
        (
            {"signature_name": "predict", "instances": [{"island": "DREAM"}]},
            "instances[0]: no value for the input body_mass_g, culmen_depth_mm,",
        ),
        (
            {"signature_name": "predict", "instances": [{**SAMPLE["instances"][0], "x": 1}]},
            "instances[0].x: the signature has no input 'x'",
        ),
        (
            {"signature_name": "predict", "instances": [{**SAMPLE["instances"][0], "sex": 1}]},
            "instances[0].sex: the number 1 where a string is expected",
        ),
        (
            {"signature_name": "counts", "inputs": {"n": [1.5], "flag": [True]}},
            "inputs.n[0]: 1.5 where a whole number (int32) is expected",
        ),
        (
            {"signature_name": "counts", "inputs": {"n": [2**31], "flag": [True]}},
            "inputs.n[0]: 2147483648 is out of int32's range",
        ),
        (
            {"signature_name": "counts", "inputs": {"n": [1]}},
            "inputs.flag: missing (the signature's inputs: flag, n)",
        ),
        (
            {"signature_name": "counts", "inputs": [1]},
            "inputs: an object naming the inputs flag, n is required",
        ),
        (
            {"signature_name": "counts", "inputs": {"n": 1, "flag": [1]}},
            "inputs.flag[0]: the number 1 where true or false is expected",
        ),
        ({"inputs": [[1e39, 0]]}, "inputs[0][0]: 1e+39 cannot be a float32 without loss"),
        ({"inputs": [[2**24, 0]]}, "inputs[0][0]: 16777216 cannot be a float32 without loss"),
    ],
)
def test_a_body_it_cannot_take_is_refused_naming_the_field(body: object, message: str) -> None:
    assert refused(body).startswith(message), refused(body)


def test_one_output_answers_its_values_several_an_object_each() -> None:
    probabilities = numpy.array([[0.7310586, 0.2689414]], dtype=numpy.float32)
    assert make_response({"probabilities": probabilities}, row=True) == {
        "predictions": [[0.7310586, 0.2689414]]  # float32 written as short as reads back
    }
    outputs = {
        "score": numpy.array([3.0, 4.0], dtype=numpy.float32),
        "kind": numpy.array([b"a", b"b"], dtype=object),
        "count": numpy.array([1, 2], dtype=numpy.int64),
    }
    assert make_response(outputs, row=True) == {
        "predictions": [
            {"count": 1, "kind": "a", "score": 3.0},
            {"count": 2, "kind": "b", "score": 4.0},
        ]
    }
    assert make_response(outputs, row=False) == {
        "outputs": {"count": [1, 2], "kind": ["a", "b"], "score": [3.0, 4.0]}
    }
    assert make_response({"total": numpy.float32(7.5)}, row=False) == {"outputs": 7.5}


def test_bytes_outputs_nan_and_what_the_row_format_cannot_answer() -> None:
    answer = make_response({"png_bytes": numpy.array([b"\x89PNG"], dtype=object)}, row=True)
    assert answer == {"predictions": [{"b64": "iVBORw=="}]}
    nan = make_response({"x": numpy.array([math.nan, math.inf])}, row=True)
    assert json.dumps(nan) == '{"predictions": [NaN, Infinity]}'  # TF Serving's tokens
    with pytest.raises(RequestError, match="outputs: total is a scalar, which the row format"):
        make_response({"total": numpy.float32(1.0)}, row=True)
    with pytest.raises(RequestError, match="outputs: b has 1 rows where the other outputs have 2"):
        make_response({"a": numpy.zeros(2), "b": numpy.zeros(1)}, row=True)
