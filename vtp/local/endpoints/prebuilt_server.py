"""`python -m vtp.local.endpoints.prebuilt_server`: a local stand-in for Google's prebuilt XGBoost
and scikit-learn prediction images, started by the service for a model that names one.

What the images document, over the same HTTP server as `vtp.trainer.serve` (its secret, Host,
Origin and body checks, AIP_HTTP_PORT, AIP_HEALTH_ROUTE, AIP_PREDICT_ROUTE, AIP_STORAGE_URI):

    POST {"instances": [[feature, ...], ...]}  ->  200 {"predictions": [...]}

- xgboost: model.bst loads into an `xgboost.Booster` (the Booster's format: data, no code);
  instances become a `DMatrix` of floats and the predictions are `Booster.predict`'s, as lists
  (a multi-class softprob model answers one list of probabilities per instance). A model.joblib
  or model.pkl object answers with its own `predict`.
- sklearn: model.joblib or model.pkl; the predictions are the estimator's `predict`.

The service chooses the file (VTP_PREBUILT_MODEL_FILE, under AIP_STORAGE_URI) and the image
(VTP_PREBUILT_FRAMEWORK). The file is loaded from a checked private copy, never through a link
that leads out of the storage root (`vtp.trainer.serve_files`). A joblib or pickle file runs code
as it loads, so it is loaded only when VTP_SERVING_ALLOW_PICKLE=1, which the service passes on
from its operator; otherwise the server stops, saying so. Exit statuses as `vtp.trainer.serve`'s.
"""

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vtp import storage
from vtp.local.endpoints.prebuilt import (
    ALLOW_PICKLE_ENV,
    CODE_FORMATS,
    FRAMEWORK_ENV,
    MODEL_FILE_ENV,
    MODEL_FILES,
    pickle_allowed,
)
from vtp.trainer.predict import BadRequest
from vtp.trainer.serve import ServeConfig, Server, run
from vtp.trainer.serve_files import private_copy, storage_root_for

NAME = "prebuilt_server"


class FrameworkPredictor:
    """A loaded XGBoost Booster or estimator: request bodies in, predictions out."""

    def __init__(self, model: Any, framework: str) -> None:
        self.model, self.framework = model, framework

    @classmethod
    def load(cls, path: Path, framework: str, allow_pickle: bool) -> "FrameworkPredictor":
        """The model in `path`; ValueError when its format may not be loaded."""
        if path.suffix in CODE_FORMATS:
            if not allow_pickle:
                raise ValueError(
                    f"{path.name} is pickle-based and loading it runs code; the service's "
                    f"operator allows that with {ALLOW_PICKLE_ENV}=1"
                )
            import joblib  # scikit-learn's dependency; it reads .pkl files too

            return cls(joblib.load(path), framework)
        import xgboost

        booster = xgboost.Booster()
        booster.load_model(str(path))
        return cls(booster, framework)

    def predict(self, body: Any) -> list[Any]:
        """One prediction per instance; BadRequest for a body without a list of instances of
        one length. A Booster takes numbers (a `DMatrix` of floats); an estimator takes what
        the images give it, `numpy.asarray(instances)`, so a pipeline of its own may take rows
        of numbers and strings (which numpy makes strings, as it does there)."""
        if not isinstance(body, dict) or not isinstance(body.get("instances"), list):
            raise BadRequest("the body must be a JSON object with a list of 'instances'")
        import numpy

        booster = type(self.model).__name__ == "Booster"
        try:
            features = numpy.asarray(body["instances"], dtype=numpy.float64 if booster else None)
        except (TypeError, ValueError) as exc:
            kind = "numbers" if booster else "values"
            raise BadRequest(f"instances must be lists of {kind} of one length: {exc}") from None
        if features.ndim != 2 or features.dtype == object:
            raise BadRequest(f"instances must be lists of values; got shape {features.shape}")
        if booster:
            import xgboost

            predictions = self.model.predict(xgboost.DMatrix(features))
        else:
            try:
                predictions = self.model.predict(features)
            except (TypeError, ValueError) as exc:  # the estimator's own word on its input
                raise BadRequest(str(exc)) from None
        return numpy.asarray(predictions).tolist()


class PrebuiltServer(Server):
    """`vtp.trainer.serve`'s server with a framework's model loaded in place of an export."""

    def __init__(self, config: ServeConfig, secret: str, env: Mapping[str, str]) -> None:
        super().__init__(config, secret, frozenset())
        self.framework = env.get(FRAMEWORK_ENV, "")
        self.model_file = env.get(MODEL_FILE_ENV, "")
        self.allow_pickle = pickle_allowed(env)

    def load(self) -> None:
        """Load the model (in a thread: the port answers 503 meanwhile), or shut down."""
        try:
            if self.model_file not in MODEL_FILES.get(self.framework, ()):
                raise ValueError(
                    f"{FRAMEWORK_ENV}={self.framework!r} and {MODEL_FILE_ENV}="
                    f"{self.model_file!r} name no model file a prebuilt image loads"
                )
            self.predictor = self.load_checked(storage.local_path(self.config.storage_uri))
        except Exception as exc:
            self.failure = f"cannot load the model at {self.config.storage_uri}: {exc}"
            self.shutdown()
            return
        config = self.config
        print(
            f"{NAME}: serving {config.storage_uri}/{self.model_file} ({self.framework}) on "
            f"{config.host}:{config.port} (GET {config.health_route}, POST {config.predict_route})",
            flush=True,
        )

    def load_checked(self, directory: Path) -> FrameworkPredictor:
        """The model file of `directory`, loaded from a checked private copy (`serve_files`): a
        link in storage that leads out of it is refused, naming the file, and one swapped in
        after the check is never read (xgboost and joblib open the name again)."""
        uri = self.config.storage_uri
        root = storage_root_for(uri, directory)
        with private_copy(directory, (self.model_file,), root, uri) as copy:
            return FrameworkPredictor.load(
                copy / self.model_file, self.framework, self.allow_pickle
            )


def main() -> int:
    """Serve until stopped; the exit status says why it stopped early."""
    return run(NAME, lambda config, secret: PrebuiltServer(config, secret, os.environ))


if __name__ == "__main__":
    sys.exit(main())
