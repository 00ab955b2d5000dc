"""test_utils.download: fetch a URL to a local file, as MXNet's tests fetch data sets.

The file is written to a temporary name beside the target and renamed at the end, so an
interrupted or failed download never leaves a truncated file that a later call (which skips
existing files) would take for a complete one.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import urllib.request

from ..base import NNVMError

_CHUNK = 1 << 20


def _fetch(url: str, fname: str) -> None:
    folder = os.path.dirname(fname) or "."
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(fname) + ".", suffix=".part", dir=folder)
    try:
        with urllib.request.urlopen(url) as response, os.fdopen(fd, "wb") as out:
            status = getattr(response, "status", 200)
            if status != 200:
                raise NNVMError(f"download: {url} answered HTTP {status}, expected 200")
            shutil.copyfileobj(response, out, _CHUNK)
        os.replace(tmp, fname)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def download(
    url: str,
    fname: str | None = None,
    dirname: str | None = None,
    overwrite: bool = False,
    retries: int = 5,
) -> str:
    """Download `url` to `fname` (default: the URL's last path component), inside `dirname`
    when given (created if missing); returns the file name.

    An existing file is kept unless `overwrite`. `retries` is the number of attempts (at
    least one is made); an attempt fails on a network error or a status other than 200, and
    the last failure is raised.
    """
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise NNVMError(f"download: retries expects an int >= 0, got {retries!r}")
    if fname is None:
        fname = url.split("/")[-1]
        if not fname:
            raise NNVMError(f"download: cannot guess a file name from url {url!r}; pass fname")
    if dirname is not None:
        fname = os.path.join(dirname, fname)
    folder = os.path.dirname(fname)
    if folder:
        os.makedirs(folder, exist_ok=True)
    if os.path.exists(fname) and not overwrite:
        logging.info("download: %s exists, skipping the download", fname)
        return fname
    for attempts_left in range(max(retries, 1) - 1, -1, -1):
        try:
            _fetch(url, fname)
            break
        except (OSError, NNVMError) as err:  # URLError and HTTPError are OSErrors
            if attempts_left == 0:
                raise
            logging.warning("download: %s failed (%s); %d attempt(s) left", url, err, attempts_left)
    logging.info("download: %s saved as %s", url, fname)
    return fname
