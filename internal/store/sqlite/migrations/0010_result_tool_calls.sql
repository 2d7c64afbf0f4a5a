-- A result's tool calls.
--
-- results.tool_calls holds the calls the model made, in its order, as a
-- JSON list of {"id", "name", "arguments"} (arguments the text the model
-- wrote, kept as written even when it is not valid JSON); NULL when it made
-- none, and for every result stored before this version.

ALTER TABLE results ADD COLUMN tool_calls TEXT;
