-- POST /api/oauth/token, each request with its own authorization code minted beforehand
-- through the real authorize flow (one code per line in CODES).
local threads = 0
function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end
function init(args)
  codes = {}
  local n = tonumber(os.getenv("THREADS"))
  local i = 0
  for line in io.lines(os.getenv("CODES")) do
    if i % n == id then codes[#codes + 1] = line end
    i = i + 1
  end
  next_code = 1
  redirect = os.getenv("REDIRECT_URI")
end
function request()
  local code = codes[next_code]
  next_code = next_code + 1
  if code == nil then code = "exhausted" end
  return wrk.format("POST", "/api/oauth/token", nil, "grant_type=authorization_code&code=" .. code .. "&redirect_uri=" .. redirect)
end
