-- POST /api/oauth/token, each request with its own authorization code minted beforehand
-- through the real authorize flow (one code per line in CODES). Requests are formatted in
-- init(), before the clock starts, so wrk spends no more per request than with a static body.
local threads = 0
function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end
function init(args)
  local n = tonumber(os.getenv("THREADS"))
  local redirect = os.getenv("REDIRECT_URI")
  requests = {}
  local i = 0
  for code in io.lines(os.getenv("CODES")) do
    if i % n == id then
      requests[#requests + 1] = wrk.format("POST", nil, nil, "grant_type=authorization_code&code=" .. code .. "&redirect_uri=" .. redirect)
    end
    i = i + 1
  end
  next_request = 1
end
function request()
  local r = requests[next_request]
  next_request = next_request + 1
  return r or wrk.format("POST", nil, nil, "grant_type=authorization_code&code=exhausted")
end
