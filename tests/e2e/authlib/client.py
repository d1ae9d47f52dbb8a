"""
Python's Authlib (Debian's python3-authlib) against Latchkey, with its defaults: discovery, then
client credentials (client_secret_basic, Authlib's default) or the device flow (RFC 8628) as a
public client. Authlib 1.2 has no device-flow helper: the device authorization request is a plain
POST, and the polling is fetch_token with the device_code grant, waiting `interval` seconds and
5 more after slow_down, as RFC 8628 §3.5 asks. Prints one JSON object per line: what the test
reads (the device authorization answer first, then the tokens).

  python3 client.py ISSUER client_credentials CLIENT_ID SECRET SCOPE RESOURCE
  python3 client.py ISSUER device CLIENT_ID SCOPE
"""
import json
import sys
import time

import requests
from authlib.integrations.requests_client import OAuth2Session
from authlib.integrations.base_client.errors import OAuthError

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def say(obj):
    print(json.dumps(obj), flush=True)


def main():
    issuer, mode = sys.argv[1], sys.argv[2]
    meta = requests.get(issuer + "/.well-known/openid-configuration", timeout=10).json()
    if mode == "client_credentials":
        client_id, secret, scope, resource = sys.argv[3:7]
        session = OAuth2Session(client_id, secret, scope=scope)
        token = session.fetch_token(meta["token_endpoint"], grant_type="client_credentials", resource=resource)
        say(dict(token))
        return
    client_id, scope = sys.argv[3:5]
    session = OAuth2Session(client_id, token_endpoint_auth_method="none", scope=scope)
    # No token yet: the request is the client's own, sent without one.
    started = session.post(meta["device_authorization_endpoint"], data={"client_id": client_id, "scope": scope}, withhold_token=True, timeout=10)
    started.raise_for_status()
    grant = started.json()
    say(grant)
    interval = grant.get("interval", 5)
    deadline = time.time() + grant["expires_in"]
    while time.time() < deadline:
        time.sleep(interval)
        try:
            token = session.fetch_token(meta["token_endpoint"], grant_type=DEVICE_GRANT, device_code=grant["device_code"])
            say(dict(token))
            return
        except OAuthError as error:
            if error.error == "slow_down":
                interval += 5
            elif error.error != "authorization_pending":
                say({"error": error.error})
                return
    say({"error": "expired"})


main()
