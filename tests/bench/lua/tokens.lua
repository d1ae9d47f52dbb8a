-- A request with a bearer token drawn at random from the first COUNT lines of TOKENS, so the
-- working set is COUNT distinct tokens (or users); a request costs wrk one random number.
-- GET by default; METHOD, BODY and CONTENT_TYPE make it a POST. With NEW_KEYS set, BODY is a
-- format whose two %d become this thread's number and a counter: a new settings key each time.
local shared = require "shared"
setup = shared.setup
-- EXPECT_STATUS and EXPECT_BODY: every answer checked, as the refusal scripts check theirs.
if os.getenv("EXPECT_STATUS") then shared.expect_refusals() end
local counter = 0
function init(args)
  local method, contentType = os.getenv("METHOD") or "GET", os.getenv("CONTENT_TYPE")
  body, newKeys = os.getenv("BODY"), os.getenv("NEW_KEYS")
  requests = shared.requests(os.getenv("TOKENS"), function(token)
    local headers = { Authorization = "Bearer " .. token }
    if contentType then headers["Content-Type"] = contentType end
    if newKeys then return headers end
    return wrk.format(method, nil, headers, body)
  end, tonumber(os.getenv("COUNT")))
  math.randomseed(os.time() + id)
end
function request()
  local r = requests[math.random(#requests)]
  if not newKeys then return r end
  counter = counter + 1
  return wrk.format("POST", nil, r, string.format(body, id, counter))
end
