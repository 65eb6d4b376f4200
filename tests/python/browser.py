"""A headless browser for the tests' sign-ins, run as `$BROWSER URL`: follows redirects with
cookies kept, signs in as `$TEST_BROWSER_LOGIN` (default `ada`) wherever a page has a form
(oidc-provider's login and consent pages), and ends at the last page, such as a command line's
loopback redirect. Standard library only. Exits 1 when no page settles.
"""

from __future__ import annotations

import http.cookiejar
import os
import re
import sys
import urllib.parse
import urllib.request


def main(url: str) -> int:
    login = os.environ.get("TEST_BROWSER_LOGIN", "ada")
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    response = opener.open(url, timeout=10)
    for _ in range(12):
        page = response.read().decode("utf-8", "replace")
        action = re.search(r'action="([^"]+)"', page)
        if "<form" not in page or action is None:
            print(page[:200])
            return 0
        prompt = re.search(r'name="prompt" value="([^"]+)"', page)
        form = {"prompt": prompt.group(1) if prompt else "login", "login": login, "password": login}
        target = urllib.parse.urljoin(response.geturl(), action.group(1))
        response = opener.open(target, data=urllib.parse.urlencode(form).encode(), timeout=10)
    print("the sign-in did not settle", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
