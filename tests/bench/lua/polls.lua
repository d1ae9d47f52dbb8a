-- POSTs one prepared body per request, each used once (one per line in BODIES), and counts the
-- answers that are not EXPECT_STATUS with EXPECT_BODY in them: a case whose every answer is a
-- refusal by design (a device poll that finds nothing is 400 authorization_pending).
local shared = require "shared"
local threads = {}
function setup(thread)
  shared.setup(thread)
  threads[#threads + 1] = thread
end
local expected_status = tonumber(os.getenv("EXPECT_STATUS"))
local expected_body = os.getenv("EXPECT_BODY")
mismatched = 0
function init(args)
  local requests = shared.requests(os.getenv("BODIES"), function(body) return wrk.format("POST", nil, nil, body) end)
  send = shared.once_each(requests, wrk.format("POST", nil, nil, "grant_type=exhausted"))
end
function request()
  return send()
end
function response(status, headers, body)
  if status ~= expected_status or not string.find(body, expected_body, 1, true) then mismatched = mismatched + 1 end
end
function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("mismatched") end
  io.write(string.format("Mismatched answers: %d\n", total))
end
