-- POSTs the body in BODY (headers from -H), and counts the answers that are not EXPECT_STATUS
-- with EXPECT_BODY in them: a case whose every answer is a refusal by design.
wrk.method = "POST"
wrk.body = os.getenv("BODY")
require("shared").expect_refusals()
