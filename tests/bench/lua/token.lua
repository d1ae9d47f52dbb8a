-- POST /api/oauth/token, each request with its own authorization code minted beforehand
-- through the real authorize flow (one code per line in CODES), so wrk spends no more per
-- request than with a static body.
local shared = require "shared"
setup = shared.setup
function init(args)
  local redirect = os.getenv("REDIRECT_URI")
  local requests = shared.requests(os.getenv("CODES"), function(code)
    return wrk.format("POST", nil, nil, "grant_type=authorization_code&code=" .. code .. "&redirect_uri=" .. redirect)
  end)
  send = shared.once_each(requests, wrk.format("POST", nil, nil, "grant_type=authorization_code&code=exhausted"))
end
-- Defined at the top level: wrk decides from its main state whether a script makes requests.
function request()
  return send()
end
