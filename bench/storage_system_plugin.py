"""The pytest plugin `bench/storage_system.py` loads into google-cloud-storage's system tests
(`-p storage_system_plugin`): the harness's only addition to the suite, whose test bodies run
unchanged.

It marks as skipped, with the reason, each test that needs what the local service does not
serve and says it does not (docs/clients.md, Cloud Storage): another Google service (Cloud KMS,
Pub/Sub, IAM's signBlob), Google's own data, or a Cloud Storage feature outside what this
storage root can be (see CANNOT_RUN). A test not listed runs and counts, pass or fail: this list
is not a way to hide failures, and each entry says why.

It gives the suite's `storage.Client()` service-account credentials, as Google's CI has: a
service account with an RSA key made for the run, holding the local service's token as its
access token (valid for the run, never refreshed), so the suite's `service_account` fixture,
which skips ~30 core object tests without one, lets them run. The service never sees the key;
it checks the token as for any client. The account's email is the principal that token stands
for, `local@vtp.invalid` (`vtp.vertex.local_auth.GSUTIL_ACCOUNT`), as Google's CI account is
the principal of its token: the owner Cloud Storage reports for what it writes.

It also makes `_helpers.await_config_changes_propagate()` without an argument return at once:
the suite sleeps 12 s there because Google's bucket configuration is eventually consistent; the
local service's is consistent at once. A call that passes `sec` (waiting for a retention period
to run out) still sleeps.
"""

import datetime
import fnmatch
import functools
import os
import sys
import time
from collections.abc import Sequence

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.auth import crypt
from google.oauth2 import credentials as user_credentials
from google.oauth2 import service_account

from vtp.vertex.local_auth import GSUTIL_ACCOUNT

_KMS = "Cloud KMS keys are a Google service (cloudkms.googleapis.com), not served here"
_PUBSUB = "bucket notifications publish to Pub/Sub, which the local service does not serve"
_HMAC = "HMAC keys belong to service accounts of Google's IAM, which the local service lacks"
_ZONAL = "zonal (Rapid) buckets are served only over gRPC's bidirectional streaming API"

CANNOT_RUN: dict[str, str] = {
    "test_kms_integration.py::*": _KMS,
    "test_transfer_manager.py::test_upload_chunks_concurrently_with_kms": _KMS,
    "test_notification.py::*": _PUBSUB,
    "test_hmac_key_metadata.py::*": _HMAC,
    "test_zonal.py::*": _ZONAL,
}
"""`file::test` pattern (fnmatch) -> why it cannot run here."""


_SIGNED_URLS = (
    "signed URLs and POST policies: the local service authenticates its own bearer token; a URL "
    "signed with a service account's key (or through IAM's signBlob) carries no credential it "
    "can check"
)
_FILE_NAMES = (
    "object names with empty, '.' or '..' segments cannot be files under the storage root: the "
    "local service refuses them with a 400 naming the object"
)
_FOLDER_DATA = (
    "an object whose name ends in '/' holding bytes (the suite uploads simple.txt as 'parent/'): "
    "here such a name is a folder of the storage root, which holds no data (400)"
)
_XML_API = (
    "Cloud Storage's XML API (its multipart uploads, which upload_chunks_concurrently uses) is "
    "not served; the JSON API is"
)
_ACL = (
    "the ACL endpoints (/acl, /defaultObjectAcl) are not served: one bearer token reaches "
    "everything, and every bucket reports uniform bucket-level access"
)
_STAND_IN = (
    "it declares the crc32c of Google's own tests/data/random_9_MiB_file, which the snapshot "
    "lacks (the bench uploads a random stand-in of the same size)"
)
_STALE_CHECKSUM_TEST = (
    "the pre-v3.7.0 flow this test expects (the upload stored, then the client's DataCorruption "
    "and its delete): since googleapis/python-storage ddce7e53 (#1654) the client sends its "
    "checksum of the whole object with the last chunk (X-Goog-Hash), which the service checks "
    "as Cloud Storage does, so the patched wrong value is refused with a 400 naming crc32c and "
    "nothing is stored (that commit dropped resumable_media's twin of this test)"
)
_VERSIONS = "noncurrent generations: a file holds one version, so versioning keeps none"
CANNOT_RUN.update(
    {
        "test_blob.py::test_large_file_write_from_stream_w_user_provided_checksum": _STAND_IN,
        "test_blob.py::test_touch_and_write_large_file_w_user_provided_checksum": _STAND_IN,
        "test_blob.py::test_blob_acl_*": _ACL,
        "test_bucket.py::test_bucket_acls_w_metageneration_match": _ACL,
        "test_bucket.py::test_bucket_acls_iam_w_user_project": _ACL,
        "test_bucket.py::test_new_bucket_w_ubla": _ACL,
        "test_bucket.py::test_ubla_set_unset_preserves_acls": _ACL,
        "test_blob.py::test_large_file_write_from_stream_w_encryption_key": (
            "customer-supplied encryption keys: an object here is the plain file replicas read"
        ),
        "test_bucket.py::test_bucket_delete_force_works_with_versions": _VERSIONS,
        "test_blob.py::test_blob_crud_w_generation_match": (
            f"{_VERSIONS} (it reads, patches and deletes the object's first generation after "
            "writing a second into a versioned bucket)"
        ),
        "test_blob.py::test_blob_crud_w_user_project": (
            f"{_VERSIONS} (it reads both generations of an object written twice into a "
            "versioned bucket)"
        ),
        "test_blob.py::test_large_file_write_from_stream_w_failed_checksum": _STALE_CHECKSUM_TEST,
        "test_bucket.py::test_new_bucket_created_w_inherited_pap": (
            f"{_ACL} (make_public reads the bucket's and the object's ACL; the part before it, "
            "publicAccessPrevention kept and a bad value refused with a 400, runs in "
            "tests/vtp/local/test_storage_metadata.py)"
        ),
        "test_bucket.py::test_soft_delete_policy": (
            "soft delete: a delete removes the file (the policy is only reported)"
        ),
        "test_client.py::test_restore_bucket": (
            "soft-deleted buckets: deleting a bucket removes its folder, so none is restored"
        ),
        "test_bucket.py::test_bucket_get_set_iam_policy": (
            "IAM policies are not enforced or kept: the service keeps buckets open to its token"
        ),
        "test__signing.py::*": _SIGNED_URLS,
        "test_client.py::test_anonymous_client_access_to_public_bucket": (
            "Google's public bucket gcp-public-data-landsat, read anonymously"
        ),
        "test_bucket.py::test_blob_exists_hierarchy": _FOLDER_DATA,
        "test_bucket.py::test_bucket_list_blobs_hierarchy_*": _FOLDER_DATA,
        "test_bucket.py::test_bucket_list_blobs_include_managed_folders": (
            "managed folders (folders with IAM policies of their own) are not served: folders "
            "here are name prefixes"
        ),
        "test_bucket.py::test_bucket_move_blob_hns": (
            "hierarchical-namespace buckets (folders as resources, atomic folder renames) are not "
            "served: every bucket here is flat"
        ),
        "test_transfer_manager.py::test_upload_chunks_concurrently*": _XML_API,
        "test_transfer_manager.py::test_download_many_to_path_mixed_results": _FILE_NAMES,
    }
)


def _has_dot_segments(item: pytest.Item) -> bool:
    """Whether a test's `blobname` parameter is a name that cannot be a file here."""
    callspec = getattr(item, "callspec", None)
    name = callspec.params.get("blobname") if callspec else None
    return isinstance(name, str) and bool({"", ".", ".."} & set(name.split("/")))


def _service_account(token: str, scopes: Sequence[str]) -> service_account.Credentials:
    """A service account with a key made now, holding `token` until the run ends.

    It has the client's `scopes` already: a `storage.Client(credentials=...)` built from it (as
    transfer_manager's process workers build theirs from the pickled client) then keeps this
    very object, token included, instead of a scoped copy without one that would refresh. A
    refresh all the same goes to the local service, which refuses it at once (401: a
    RefreshError, which no client retries), never to a closed port, whose connection errors the
    client retries for minutes per request."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    account = service_account.Credentials(
        crypt.RSASigner.from_string(pem),
        GSUTIL_ACCOUNT,
        f"{os.environ.get('STORAGE_EMULATOR_HOST', 'http://127.0.0.1:1')}/token",
        scopes=scopes,
        project_id="local",
    )
    account.token = token
    account.expiry = datetime.datetime.now(datetime.UTC).replace(tzinfo=None) + datetime.timedelta(
        days=1
    )
    return account


def pytest_configure(config: pytest.Config) -> None:
    """Give `storage.Client()` a service account holding the start-up hook's token."""
    from google.cloud.storage import client  # type: ignore[import-untyped]

    original = client.Client.__init__

    @functools.wraps(original)
    def __init__(self: client.Client, *args: object, **kwargs: object) -> None:
        original(self, *args, **kwargs)
        given = self._credentials
        if type(given) is user_credentials.Credentials and given.token:
            self._credentials = _service_account(given.token, client.Client.SCOPE)

    client.Client.__init__ = __init__


def _no_propagation_wait(sec: float = 0) -> None:
    """`await_config_changes_propagate`: sleeps only a wait the test asks for by its length."""
    time.sleep(sec)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Skip the tests CANNOT_RUN names, saying why; drop the suite's propagation waits."""
    for item in items:
        node = f"{item.path.name}::{item.name}"
        reason = next((why for p, why in CANNOT_RUN.items() if fnmatch.fnmatch(node, p)), None)
        if reason is None and item.path.name == "test_transfer_manager.py":
            reason = _FILE_NAMES if _has_dot_segments(item) else None
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"not served here: {reason}"))
    for name, module in list(sys.modules.items()):
        if name.endswith("system._helpers") and hasattr(module, "await_config_changes_propagate"):
            setattr(module, "await_config_changes_propagate", _no_propagation_wait)  # noqa: B010
