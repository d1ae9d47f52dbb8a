-- The request wrk makes from its command line (method, path, -H headers), each answer checked:
-- counted when it is not EXPECT_STATUS with EXPECT_BODY in it.
require("shared").expect_refusals()
