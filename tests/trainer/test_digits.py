"""The digits task reads scikit-learn's data without importing it, and splits as it would."""

import json

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from vtp.trainer.config import Config
from vtp.trainer.tasks import digits


def test_images_and_labels_are_load_digits():
    images, targets = digits.load_digits()
    expected_images, expected_targets = load_digits(return_X_y=True)
    np.testing.assert_array_equal(images, expected_images)
    np.testing.assert_array_equal(targets, expected_targets)


def test_the_shipped_split_is_train_test_split_with_the_fixed_seed():
    _, targets = load_digits(return_X_y=True)
    train, evaluation = train_test_split(
        np.arange(len(targets)), test_size=0.2, random_state=digits.SPLIT_SEED, stratify=targets
    )
    shipped = json.loads(digits.SPLIT_FILE.read_text())
    assert shipped == {"train": train.tolist(), "eval": evaluation.tolist()}


def test_datasets_are_the_split_images_scaled():
    train, evaluation = digits.build_datasets(None)
    images, targets = load_digits(return_X_y=True)
    shipped = json.loads(digits.SPLIT_FILE.read_text())
    assert (len(train), len(evaluation)) == (1437, 360)
    x, y = evaluation.tensors
    np.testing.assert_allclose(x.numpy(), images[shipped["eval"]] / 16.0, rtol=1e-6)
    np.testing.assert_array_equal(y.numpy(), targets[shipped["eval"]])


def test_the_file_is_parsed_once_per_process_and_callers_get_their_own_arrays(monkeypatch):
    parses = []
    loadtxt = np.loadtxt

    def counted(*args, **kwargs):
        parses.append(args)
        return loadtxt(*args, **kwargs)

    monkeypatch.setattr(np, "loadtxt", counted)
    digits._parsed.cache_clear()
    first_eval = digits.build_datasets(Config())[1]
    images, targets = digits.load_digits()
    images[:] = -1  # the caller's own copy: what later callers get is unchanged
    targets[:] = -1
    again_images, again_targets = digits.load_digits()
    second_eval = digits.build_datasets(Config())[1]
    assert len(parses) == 1
    expected_images, expected_targets = load_digits(return_X_y=True)
    np.testing.assert_array_equal(again_images, expected_images)
    np.testing.assert_array_equal(again_targets, expected_targets)
    for first, second in zip(first_eval.tensors, second_eval.tensors, strict=True):
        assert torch.equal(first, second)
