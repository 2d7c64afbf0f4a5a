package task

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/spec"
)

const jsonlHint = `(each line must be one JSON object, like {"question": "…", "answer": "…"})`

// badCases locks every bad fixture to the exact problems a user sees. Each
// expectation was written by reading the fixture: paths are relative to
// testdata/, positions are 1-based line:column of the offending text.
var badCases = []struct {
	spec string
	want []string
}{
	{"bad/unknown_top_key.yaml", []string{
		`bad/unknown_top_key.yaml:9:1: unknown key "volum" (did you mean "volume"? valid keys are: agent, calibration, candidates, combine, dataset, difficulty, error_costs, experiment, gate, labels, load, name, output, prompt, refusal, response_format, run, scorers, targets, tool_choice, tools, traces, volume)`,
	}},
	{"bad/bad_candidates.yaml", []string{
		`bad/bad_candidates.yaml:8:21: candidates: no target named "gradr" (did you mean "grader"? defined targets: model, grader)`,
		`bad/bad_candidates.yaml:8:28: candidates: "model" is listed twice (list each candidate once)`,
	}},
	{"bad/empty_candidates.yaml", []string{
		`bad/empty_candidates.yaml:7:1: candidates must list at least one target (name the targets under test, or drop candidates: to test every target that is not a judge)`,
	}},
	{"bad/only_judges.yaml", []string{
		`bad/only_judges.yaml:5:1: every target is a judge (grader): there is no candidate to test (list the targets under test in candidates: (a judge may be one), or add a target that is not a judge)`,
	}},
	{"bad/unknown_target_key.yaml", []string{
		`bad/unknown_target_key.yaml:6:5: targets[0].model is required for provider openai (the model name the server expects)`,
		`bad/unknown_target_key.yaml:8:5: unknown key "modle" in targets[0] (did you mean "model"? valid keys are: api_key_env, api_key_file, base_url, command, env, headers, limits, max_output_bytes, model, name, params, price, provider, replay, stream, timeout)`,
	}},
	{"bad/unknown_key_no_suggestion.yaml", []string{
		`bad/unknown_key_no_suggestion.yaml:3:3: unknown key "colour" in dataset (valid keys are: expected, expected_extract, format, id, limit, path, tags, weight)`,
	}},
	{"bad/bad_schedule.yaml", []string{
		`bad/bad_schedule.yaml:9:28: unknown run.schedule "sequental" (did you mean "sequential"? run.schedule is parallel or sequential)`,
	}},
	{"bad/bad_schedule_list.yaml", []string{
		`bad/bad_schedule_list.yaml:10:13: run.schedule must be a string, got a list`,
	}},
	{"bad/wrong_types.yaml", []string{
		`bad/wrong_types.yaml:3:10: dataset.limit must be a whole number, got the string "ten"`,
		`bad/wrong_types.yaml:10:13: targets[0].stream must be true or false, got the string "yes" (write true or false)`,
		`bad/wrong_types.yaml:11:27: targets[0].params.temperature must be a number, got the string "hot"`,
		`bad/wrong_types.yaml:11:44: targets[0].params.max_tokens must be a whole number, got the string "512" (write the number without quotes)`,
		`bad/wrong_types.yaml:12:12: targets[0].price must be a mapping of keys to values, got a list`,
		`bad/wrong_types.yaml:16:11: run.epochs must be a whole number, got the string "3" (write the number without quotes)`,
	}},
	{"bad/command_not_list.yaml", []string{
		`bad/command_not_list.yaml:8:14: targets[0].command must be a list, got the string "./bin/app --eval" (write a list, e.g. ["a", "b"])`,
	}},
	{"bad/targets_not_list.yaml", []string{
		`bad/targets_not_list.yaml:5:10: targets must be a list, got a mapping`,
	}},
	{"bad/missing_required.yaml", []string{
		`bad/missing_required.yaml:2:1: dataset.path is required (the JSONL or CSV file of cases, relative to the spec)`,
		`bad/missing_required.yaml:4:1: prompt.user is required (the user message template, e.g. user: "Q: {{.question}}")`,
		`bad/missing_required.yaml:7:5: targets[0].name is required`,
		`bad/missing_required.yaml:7:5: targets[0].provider is required (supported providers are: openai, anthropic, exec, replay)`,
	}},
	{"bad/no_targets.yaml", []string{
		`bad/no_targets.yaml:5:1: targets must list at least one target`,
	}},
	{"bad/duplicate_target_names.yaml", []string{
		`bad/duplicate_target_names.yaml:7:12: duplicate target name "fast" (first at line 6) (target names must be unique)`,
	}},
	{"bad/unknown_provider.yaml", []string{
		`bad/unknown_provider.yaml:7:15: unknown provider "opnai" (did you mean "openai"? supported providers are: openai, anthropic, exec, replay)`,
		`bad/unknown_provider.yaml:10:15: unknown provider "bedrock" (supported providers are: openai, anthropic, exec, replay)`,
	}},
	{"bad/replay_problems.yaml", []string{
		`bad/replay_problems.yaml:8:5: targets[0].replay.join is required (the case field whose value finds the record, e.g. question)`,
		`bad/replay_problems.yaml:8:5: targets[0].replay.output is required (the dotted path of the output inside each record, e.g. answers.model_b)`,
		`bad/replay_problems.yaml:9:13: targets[0].replay.path: cannot read "missing.jsonl": no such file (paths are relative to the spec's directory)`,
		`bad/replay_problems.yaml:10:5: targets[1].replay is required for provider replay (path, join, output) (e.g. replay: {path: recorded.jsonl, join: question, output: answers.model_b})`,
	}},
	{"bad/exec_without_command.yaml", []string{
		`bad/exec_without_command.yaml:6:5: targets[0].command is required for provider exec (e.g. command: ["./bin/app", "--eval"])`,
	}},
	{"bad/openai_problems.yaml", []string{
		`bad/openai_problems.yaml:6:5: targets[0].model is required for provider openai (the model name the server expects)`,
		`bad/openai_problems.yaml:8:15: targets[0].base_url must be an http:// or https:// URL (e.g. http://127.0.0.1:11434/v1)`,
		`bad/openai_problems.yaml:9:18: targets[0].api_key_env looks like a secret value (sk-proj-… (20 characters)) pasted where a variable NAME belongs (write the variable's name, e.g. OPENAI_API_KEY, export the key in the environment, and rotate the key if this spec was shared or committed)`,
	}},
	{"bad/negative_limits.yaml", []string{
		`bad/negative_limits.yaml:3:10: dataset.limit must not be negative, got -1 (use 0 or leave it out to read every case)`,
		`bad/negative_limits.yaml:10:27: targets[0].limits.concurrency must be at least 1, got 0 (the number of requests in flight, at least 1)`,
		`bad/negative_limits.yaml:10:35: targets[0].limits.rpm must not be negative, got -5 (use 0 or leave it out for no limit)`,
		`bad/negative_limits.yaml:10:44: targets[0].limits.tpm must not be negative, got -1 (use 0 or leave it out for no limit)`,
		`bad/negative_limits.yaml:11:23: targets[0].max_output_bytes must not be negative`,
		`bad/negative_limits.yaml:12:29: targets[0].price.input_per_mtok must not be negative`,
		`bad/negative_limits.yaml:15:15: run.epochs must be at least 1, got 0`,
		`bad/negative_limits.yaml:15:27: run.retries must not be negative, got -1 (use 0 for no retries)`,
	}},
	{"bad/huge_numbers.yaml", []string{
		`bad/huge_numbers.yaml:9:27: targets[0].limits.concurrency must be between 1 and 1024, got 1000000`,
		`bad/huge_numbers.yaml:9:41: targets[0].limits.rpm must be between 0 and 1000000, got 9223372036854775807 (use 0 or leave it out for no limit)`,
		`bad/huge_numbers.yaml:9:67: targets[0].limits.tpm must be between 0 and 1000000000, got 2000000000 (use 0 or leave it out for no limit)`,
		`bad/huge_numbers.yaml:10:23: targets[0].max_output_bytes must be between 0 and 67108864 (64 MiB), got 9223372036854775807`,
		`bad/huge_numbers.yaml:13:15: run.epochs must be between 1 and 1000, got 9223372036854775807`,
		`bad/huge_numbers.yaml:13:45: run.retries must be between 0 and 100, got 1000`,
	}},
	{"bad/alias_bomb.yaml", []string{
		`bad/alias_bomb.yaml:14:35: aliases expand the spec past 8 MiB; at most 8 MiB is allowed after expansion (an alias repeats its anchor's whole value; move long text to a file:// reference or repeat fewer times)`,
	}},
	{"bad/bad_durations.yaml", []string{
		`bad/bad_durations.yaml:9:14: targets[0].timeout must be a duration, got "5 minutes" (write a duration like 30s, 1m30s or 250ms)`,
		`bad/bad_durations.yaml:13:14: targets[1].timeout must not be negative, got -5s`,
		`bad/bad_durations.yaml:17:12: run.timeout must be a duration, got the number 60 (durations need a unit: write e.g. 60s)`,
	}},
	{"bad/bad_output_format.yaml", []string{
		`bad/bad_output_format.yaml:8:11: unknown output format "jsn" (did you mean "json"? supported formats are: text, regex, json, last_number)`,
	}},
	{"bad/bad_extract_regex.yaml", []string{
		`bad/bad_extract_regex.yaml:8:12: output.extract does not compile: missing closing ]: "[0-9+" (the syntax is Go's RE2: https://golang.org/s/re2syntax)`,
	}},
	{"bad/extract_without_group.yaml", []string{
		`bad/extract_without_group.yaml:8:12: output.extract has no capture group; its first group is the value (wrap the part to keep in parentheses, e.g. 'A:\s*(.+)$')`,
	}},
	{"bad/bad_expected_extract.yaml", []string{
		`bad/bad_expected_extract.yaml:4:21: dataset.expected_extract does not compile: missing closing ): "####\\s*(.+" (the syntax is Go's RE2: https://golang.org/s/re2syntax)`,
	}},
	{"bad/bad_dataset_format.yaml", []string{
		`bad/bad_dataset_format.yaml:3:11: unknown dataset format "xlsx" (supported formats are: jsonl, csv)`,
	}},
	{"bad/unknown_extension.yaml", []string{
		`bad/unknown_extension.yaml:2:9: cannot tell the dataset format from the file name "qa.txt" (set dataset.format to jsonl or csv)`,
	}},
	{"bad/yaml_unclosed_quote.yaml", []string{
		`bad/yaml_unclosed_quote.yaml:4:9: invalid YAML: could not find end character of double-quoted text (close the string with a matching ")`,
	}},
	{"bad/yaml_bad_indent.yaml", []string{
		// The YAML library reads "../common/qa.jsonl\n   expected" as one
		// scalar, so it points at where that scalar starts.
		`bad/yaml_bad_indent.yaml:2:9: invalid YAML: mapping value is not allowed in this context (check the indentation here and on the lines below; quote a value that contains ": ")`,
	}},
	{"bad/yaml_unclosed_flow.yaml", []string{
		`bad/yaml_unclosed_flow.yaml:6:1: invalid YAML: ',' or ']' must be specified (a list opened with [ is not closed)`,
	}},
	{"bad/duplicate_key.yaml", []string{
		`bad/duplicate_key.yaml:5:1: duplicate key "prompt" in the spec (first at line 3)`,
		`bad/duplicate_key.yaml:8:49: duplicate key "command" in targets[0] (first at line 8)`,
	}},
	{"bad/interpolation.yaml", []string{
		`bad/interpolation.yaml:8:12: targets[0].model: environment variable ASSAY_FIXTURE_UNSET_MODEL is not set (export ASSAY_FIXTURE_UNSET_MODEL, or give a default: ${ASSAY_FIXTURE_UNSET_MODEL:-value})`,
		`bad/interpolation.yaml:9:56: targets[0].base_url: ${ is not closed with } (write ${NAME} or ${NAME:-default}; write $$ for a literal $)`,
		`bad/interpolation.yaml:10:19: targets[0].limits.rpm must be a whole number, got "many" (after ${...})`,
		`bad/interpolation.yaml:13:7: targets[0].headers: header Authorization is set by assay or the SDK and cannot be replaced (the key goes in api_key_env or api_key_file; the client sets the others)`,
		`bad/interpolation.yaml:14:17: targets[0].headers.X-Team: ${...} holds an empty name (write ${NAME} or ${NAME:-default}: a NAME is letters, digits and _, not starting with a digit; write $$ for a literal $)`,
	}},
	{"bad/multiple_documents.yaml", []string{
		`bad/multiple_documents.yaml:6:1: the spec must be a single YAML document, found a second one (remove the '---' separator)`,
	}},
	{"bad/empty.yaml", []string{
		`bad/empty.yaml:1:1: the spec is empty (it needs at least dataset, prompt and targets)`,
	}},
	{"bad/not_a_mapping.yaml", []string{
		`bad/not_a_mapping.yaml:1:1: the spec must be a mapping of keys to values, got a list`,
	}},
	{"bad/prompt_file_missing/assay.yaml", []string{
		`bad/prompt_file_missing/assay.yaml:5:9: prompt.user: cannot read "prompts/user.txt": no such file (paths are relative to the spec's directory)`,
	}},
	{"bad/template_parse_error.yaml", []string{
		`bad/template_parse_error.yaml:4:9: prompt.user does not parse: line 1: bad character U+007D '}' (the prompt is a Go text/template, e.g. "Q: {{.question}}")`,
	}},
	{"bad/template_unknown_field.yaml", []string{
		`bad/template_unknown_field.yaml:5:9: prompt.user references field "questoin" that the dataset lacks (fields: answer, question) (did you mean "question"?)`,
	}},
	{"bad/field_missing_in_some_rows/assay.yaml", []string{
		`bad/field_missing_in_some_rows/assay.yaml:4:11: prompt.system references field "context" that 1 of 3 cases lack (first at testdata/bad/field_missing_in_some_rows/data.jsonl:2) (every case needs each field the prompt uses)`,
	}},
	{"bad/malformed_jsonl/assay.yaml", []string{
		`bad/malformed_jsonl/data.jsonl:2:43: invalid JSON: the line ends before the value is complete ` + jsonlHint,
		`bad/malformed_jsonl/data.jsonl:4:1: line holds an array, not a JSON object ` + jsonlHint,
		`bad/malformed_jsonl/data.jsonl:5:47: unexpected data after the JSON object ` + jsonlHint,
		`bad/malformed_jsonl/data.jsonl:6:14: invalid JSON: invalid character '\'' looking for beginning of value ` + jsonlHint,
	}},
	{"bad/bad_history/assay.yaml", []string{
		`bad/bad_history/assay.yaml:6:19: prompt.messages_field references field "history" that 1 of 6 cases lack (first at testdata/bad/bad_history/data.jsonl:6) (every case needs each field the prompt uses)`,
		`bad/bad_history/data.jsonl:2:1: message history "history": must be a list of messages (or its JSON text), got the string "Book Paris" (a JSON list of {"role": "user", "content": "…"}; an assistant message may carry "tool_calls": [{"id": "c1", "name": "f", "arguments": {…}}], a "tool" message answers one with "tool_call_id": "c1")`,
		`bad/bad_history/data.jsonl:3:1: message history "history": message 1: unknown role "human" (roles are system, user, assistant, tool)`,
		`bad/bad_history/data.jsonl:4:1: message history "history": message 2: a tool message needs tool_call_id (the id of the assistant's call this result answers)`,
		`bad/bad_history/data.jsonl:5:1: message history "history": message 1: tool_calls: call 1: needs an id (a string the tool message answering it names in tool_call_id) (a JSON list of {"role": "user", "content": "…"}; an assistant message may carry "tool_calls": [{"id": "c1", "name": "f", "arguments": {…}}], a "tool" message answers one with "tool_call_id": "c1")`,
	}},
	{"bad/bad_tools/assay.yaml", []string{
		`bad/bad_tools/assay.yaml:8:5: tools[0]: parameters of tool "book" does not compile: at /properties/city/minLength: minimum: got -1, want 0 (a JSON Schema, draft 2020-12 unless $schema says otherwise)`,
		`bad/bad_tools/assay.yaml:12:5: tools[1]: "tools.json", tool 2: tool name "lookup table" is not a valid name (1 to 64 letters, digits, '_' or '-')`,
		`bad/bad_tools/assay.yaml:12:5: tools[1]: "tools.json", tool 3: parameters of tool "rate" must describe an object (type: object), it has type "array" (the arguments (or the reply) are one JSON object: put the values under properties)`,
		`bad/bad_tools/assay.yaml:13:5: tools[2]: "broken.json" is not valid JSON: line 2, column 36: invalid character '}' looking for beginning of object key string (the file holds one tool object or a list of them, as JSON)`,
		`bad/bad_tools/assay.yaml:14:11: tools[3]: duplicate tool name "book" (first at tools[0]) (tool names must be unique)`,
		`bad/bad_tools/assay.yaml:15:5: tools[4] must be a tool or a file:// reference, got the string "search" (write an inline tool {name, description, parameters} or file://PATH to a JSON file)`,
		`bad/bad_tools/assay.yaml:16:14: tool_choice "serch" is neither auto, none, required nor a tool of the spec (did you mean "search"? tool_choice is auto, none, required or a tool's name (book, search, rate))`,
		`bad/bad_tools/assay.yaml:19:13: response_format.json_schema.schema: cannot read "missing.schema.json": no such file (paths are relative to the spec's directory)`,
	}},
	{"bad/bad_messages/assay.yaml", []string{
		`bad/bad_messages/assay.yaml:4:11: prompt.system cannot be used with prompt.messages (write the system and user messages as entries of prompt.messages, e.g. - {role: system, content: ...})`,
		`bad/bad_messages/assay.yaml:7:14: unknown role "usr" (did you mean "user"? roles are system, user, assistant, tool)`,
		`bad/bad_messages/assay.yaml:8:34: prompt.messages[2].content does not parse: line 1: unclosed action (the prompt is a Go text/template, e.g. "Q: {{.question}}")`,
	}},
	{"bad/duplicate_ids/assay.yaml", []string{
		`bad/duplicate_ids/data.jsonl:3:2: duplicate case id "a" at line 3 (first at line 1) (case ids must be unique)`,
		`bad/duplicate_ids/data.jsonl:5:2: duplicate case id "7" at line 5 (first at line 4) (case ids must be unique)`,
		`bad/duplicate_ids/data.jsonl:6:2: empty id field "id" (every case needs a unique id)`,
		`bad/duplicate_ids/data.jsonl:7:1: missing id field "id" (dataset.id names the field holding each case's unique id; use id: line to number cases by line)`,
	}},
	{"bad/csv_unclosed_quote/assay.yaml", []string{
		`bad/csv_unclosed_quote/data.csv:5:1: a quoted field in the row starting here is never closed (a quoted field ends with "; a quote inside it is written "")`,
	}},
	{"bad/csv_bad_rows/assay.yaml", []string{
		`bad/csv_bad_rows/data.csv:3:1: row has 3 fields, the header has 2 (quote fields that contain commas)`,
		`bad/csv_bad_rows/data.csv:4:4: bare " in an unquoted field (quote the whole field and double the quote inside it, e.g. "5"" screen")`,
	}},
	{"bad/csv_header_problems/assay.yaml", []string{
		`bad/csv_header_problems/data.csv:1:10: column 2 of the header has no name (the first row names every column)`,
		`bad/csv_header_problems/data.csv:1:11: duplicate column name "question" in the header (columns 1 and 3) (column names must be unique)`,
	}},
	{"bad/cel_tag_errors.yaml", []string{
		`bad/cel_tag_errors.yaml:4:11: dataset.tags.tier does not compile: Syntax error: missing ')' at '<EOF>' (at character 41) (a tag is a field name or a CEL expression over case; the strings, math and lists extensions are available)`,
		`bad/cel_tag_errors.yaml:5:12: dataset.tags.steps does not compile: undeclared reference to 'answer' (at character 1) (fields are under case, e.g. case.answer or case["my field"])`,
		`bad/cel_tag_errors.yaml:6:13: tag "bucket" names field "category" that the dataset lacks (fields: answer, question)`,
	}},
	{"bad/cel_tag_runtime_error/assay.yaml", []string{
		`bad/cel_tag_runtime_error/data.jsonl:2:1: tag "length": no such key: notes (use has(case.FIELD) ? … : … for fields some cases lack)`,
	}},
	{"bad/dataset_fields_wrong.yaml", []string{
		`bad/dataset_fields_wrong.yaml:3:13: dataset.expected names field "answr" that the dataset lacks (fields: answer, question) (did you mean "answer"?)`,
		`bad/dataset_fields_wrong.yaml:4:11: dataset.weight names field "cost" that the dataset lacks (fields: answer, question)`,
	}},
	{"bad/bad_weights/assay.yaml", []string{
		`bad/bad_weights/data.jsonl:3:35: weight field "cost" must be a number, got "abc" (a weight is a number, the cost of a wrong answer)`,
		`bad/bad_weights/data.jsonl:4:35: weight field "cost" must not be negative, got -1 (a weight is the cost of a wrong answer, 0 or more)`,
		`bad/bad_weights/data.jsonl:5:35: weight field "cost" must be a number, got a boolean (a weight is a number, the cost of a wrong answer)`,
	}},
	{"bad/id_field_missing.yaml", []string{
		`bad/id_field_missing.yaml:3:7: dataset.id names field "task_id" that the dataset lacks (fields: answer, question)`,
	}},
	{"bad/expected_extract_nomatch/assay.yaml", []string{
		`bad/expected_extract_nomatch/data.jsonl:2:32: expected field "answer" does not match dataset.expected_extract (the value is "3 * 3 = 9, so the answer is 9")`,
		`bad/expected_extract_nomatch/data.jsonl:3:33: expected field "answer" does not match dataset.expected_extract (the value is "3")`,
	}},
	{"bad/dataset_file_missing.yaml", []string{
		`bad/dataset_file_missing.yaml:2:9: dataset.path: cannot read "../common/nope.jsonl": no such file (paths are relative to the spec's directory)`,
	}},
	// Scorer misuse (issue 3): each message located at the offending value.
	{"bad/scorer_unknown_type.yaml", []string{
		`bad/scorer_unknown_type.yaml:9:27: unknown scorer type "equal" (did you mean equals? supported types: cel, contains, cost, equals, field_equals, is_json, json_schema, judge, latency, max_length, no_tool_call, not_contains, number, one_of, regex, required_fields, similarity, tool_call, tool_calls)`,
	}},
	{"bad/scorer_bad_regex.yaml", []string{
		"bad/scorer_bad_regex.yaml:9:42: pattern is not a valid regular expression: error parsing regexp: missing closing ]: `[0-9+` (Go RE2 syntax: https://pkg.go.dev/regexp/syntax)",
	}},
	{"bad/scorer_json_path_text_parser.yaml", []string{
		`bad/scorer_json_path_text_parser.yaml:9:24: field_equals reads fields of a JSON output, but the output format is text (set output: {format: json})`,
	}},
	{"bad/scorer_missing_params.yaml", []string{
		`bad/scorer_missing_params.yaml:9:5: contains scorer needs value: or values: (e.g. value: "refund" or values: [a, b])`,
		`bad/scorer_missing_params.yaml:10:38: latency max "soon" is not a duration (max is a duration, e.g. max: 2s, 1m30s or 800ms)`,
		`bad/scorer_missing_params.yaml:11:50: unknown normaliser "lowercase" (did you mean lower? supported normalisers: trim, lower, collapse_spaces, no_commas, nfc)`,
	}},
	{"bad/scorer_cel_not_bool.yaml", []string{
		`bad/scorer_cel_not_bool.yaml:9:37: CEL expression does not compile: the expression gives int, but a scorer needs a bool (write a comparison, e.g. size(raw) < 200) (variables: output, raw, expected, case, meta, tool_calls, trajectory)`,
		`bad/scorer_cel_not_bool.yaml:10:37: CEL expression does not compile: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER} (at character 15) (variables: output, raw, expected, case, meta, tool_calls, trajectory)`,
	}},
	{"bad/scorer_judge_no_target.yaml", []string{
		`bad/scorer_judge_no_target.yaml:9:42: judge scorer: target "grade" is not defined (did you mean grader? defined targets: grader)`,
	}},
	{"bad/anthropic_seed.yaml", []string{
		`bad/anthropic_seed.yaml:9:36: targets[0].params.seed: the Anthropic Messages API has no seed (remove seed; repeat cases with --epochs to measure the variance instead)`,
	}},
	{"bad/duplicate_scorer_names.yaml", []string{
		`bad/duplicate_scorer_names.yaml:9:12: duplicate scorer name "correct" (first at line 8) (scorer names must be unique)`,
	}},
	{"bad/several_problems.yaml", []string{
		`bad/several_problems.yaml:4:3: unknown key "expectd" in dataset (did you mean "expected"? valid keys are: expected, expected_extract, format, id, limit, path, tags, weight)`,
		`bad/several_problems.yaml:6:9: prompt.user references field "level" that the dataset lacks (fields: answer, question)`,
		`bad/several_problems.yaml:8:5: targets[0].model is required for provider anthropic (the model name the server expects)`,
		`bad/several_problems.yaml:13:27: targets[1].limits.concurrency must be at least 1, got -2 (the number of requests in flight, at least 1)`,
		`bad/several_problems.yaml:15:12: output.extract does not compile: missing closing ): "A: (\\d+" (the syntax is Go's RE2: https://golang.org/s/re2syntax)`,
		`bad/several_problems.yaml:19:11: run.epochs must be at least 1, got 0`,
		`bad/several_problems.yaml:20:12: run.timeout must be a duration, got "soon" (write a duration like 30s, 1m30s or 250ms)`,
	}},
	{"bad/tags_not_mapping.yaml", []string{
		`bad/tags_not_mapping.yaml:3:9: dataset.tags must be a mapping of tag name to field or CEL expression, got a list (write tags as a mapping, e.g. tags: {tier: difficulty})`,
	}},
	// Gate rules (issue 5): each located at the offending value.
	{"bad/gate_rules.yaml", []string{
		`bad/gate_rules.yaml:12:10: gate.alpha must be above 0 and at most 0.5, got 0.9 (the usual value is 0.05)`,
		`bad/gate_rules.yaml:14:16: gate.rules[0].metric "corect" is neither a scorer of the spec nor a gate metric (did you mean "correct"? metrics are a scorer's name (correct, is_json), primary, cost_per_case, latency_p95, ttft_p95 or loud_rate)`,
		`bad/gate_rules.yaml:15:38: gate.rules[1].slice tag "knd" is not a tag of the dataset (did you mean "kind"? tags are: kind)`,
		`bad/gate_rules.yaml:15:52: gate.rules[1].max_drop "0.05" needs a unit (write 5% (relative to the baseline's rate) or 2pt (percentage points))`,
		`bad/gate_rules.yaml:16:41: gate.rules[2].max_drop: cost_per_case is lower-is-better and cannot get worse by dropping (use max_rise: a worsening of cost_per_case is a rise)`,
		`bad/gate_rules.yaml:17:39: gate.rules[3].max_rise "soon" is not a valid rise of latency_p95 (write 10% (relative to the baseline) or a duration, e.g. 200ms (a bare number is milliseconds))`,
		`bad/gate_rules.yaml:17:50: gate.rules[3].max "2 s" is not a duration (write a duration, e.g. 2s or 800ms (a bare number is milliseconds))`,
		`bad/gate_rules.yaml:18:35: gate.rules[4].max_drop "150%" is out of range: a rate cannot drop by more than 100% (write 5% (relative to the baseline's rate) or 2pt (percentage points))`,
		`bad/gate_rules.yaml:18:46: gate.rules[4].min "1.5" is out of range: a rate is between 0 and 1 (0% and 100%) (write a rate as 80% or 0.8)`,
		`bad/gate_rules.yaml:19:37: gate.rules[5].max_rise "3" needs a unit (write 10% (relative to the baseline's loud rate) or 2pt (percentage points))`,
		`bad/gate_rules.yaml:19:45: gate.rules[5].max "120%" is out of range: a rate is between 0 and 1 (0% and 100%) (write a rate as 80% or 0.8)`,
		`bad/gate_rules.yaml:20:7: gate.rules[6] sets no limit (set max_drop (5% or 2pt) or min (80%) on a rate; max_rise or max on cost_per_case, latency_p95, ttft_p95 or loud_rate)`,
		`bad/gate_rules.yaml:21:35: gate.rules[7].max_rise: the rate of "correct" is higher-is-better and cannot get worse by rising (use max_drop: a worsening of a rate is a drop)`,
		`bad/gate_rules.yaml:21:45: gate.rules[7].max: the rate of "correct" is higher-is-better; a ceiling would fail improvements (use min: a rate takes a floor)`,
		`bad/gate_rules.yaml:22:36: gate.rules[8].min: cost_per_case is lower-is-better; a floor would pass anything (use max: cost_per_case takes a ceiling)`,
		`bad/gate_rules.yaml:22:51: gate.rules[8].max_rise "-1" must not be negative (write 10% (relative to the baseline) or an amount in USD, e.g. 0.0005)`,
		`bad/gate_rules.yaml:23:7: gate.rules[9].metric is required (a scorer's name, primary, cost_per_case, latency_p95, ttft_p95 or loud_rate)`,
		`bad/gate_rules.yaml:24:25: gate.rules[10].slice names 2 tags; a slice is one tag and its value (write one tag and its value, e.g. slice: {tier: hard})`,
		`bad/gate_rules.yaml:25:35: gate.rules[11].max_drop "NaN%" is not a relative drop or a number of points (write 5% (relative to the baseline's rate) or 2pt (percentage points))`,
	}},
	{"bad/gate_shape.yaml", []string{
		`bad/gate_shape.yaml:10:10: gate.alpha must be a number, got the string "0.05" (write the number without quotes)`,
		`bad/gate_shape.yaml:12:25: unknown key "max_dorp" in gate.rules[0] (did you mean "max_drop"? valid keys are: max, max_drop, max_rise, metric, min, slice)`,
		`bad/gate_shape.yaml:13:39: gate.rules[1].slice tag "tier" is not a tag of the dataset: the spec defines no tags (add the tag under dataset.tags)`,
		`bad/gate_shape.yaml:14:32: gate.rules[2].slice must be a mapping, got the string "tier=hard"`,
		`bad/gate_shape.yaml:15:58: gate.rules[3].min: loud_rate is lower-is-better; a floor would pass anything (use max: loud_rate takes a ceiling)`,
		`bad/gate_shape.yaml:18:12: gate.rules[4].max "-2s" must not be negative`,
	}},
	{"bad/empty_dataset/assay.yaml", []string{
		`bad/empty_dataset/data.jsonl:1:1: the dataset has no cases (write one case per line in JSONL, or one per row under a header in CSV)`,
	}},
}

func problemsOf(t *testing.T, path string) []string {
	t.Helper()
	_, err := Load(path)
	if err == nil {
		t.Fatalf("Load(%s): no problems, want some", path)
	}
	var ps spec.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Load(%s): error %v is not spec.Problems", path, err)
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strings.TrimPrefix(p.String(), "testdata/")
	}
	return out
}

func TestBadFixtures(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range badCases {
		covered[strings.Split(strings.TrimPrefix(tc.spec, "bad/"), "/")[0]] = true
		t.Run(tc.spec, func(t *testing.T) {
			got := problemsOf(t, filepath.Join("testdata", tc.spec))
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems:\n got: %s\nwant: %s", strings.Join(got, "\n      "), strings.Join(tc.want, "\n      "))
			}
		})
	}
	// Every fixture on disk has an expectation.
	entries, err := os.ReadDir("testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !covered[e.Name()] {
			t.Errorf("fixture testdata/bad/%s has no expected problems in badCases", e.Name())
		}
	}
	if len(badCases) < 30 {
		t.Errorf("only %d bad fixtures; the project keeps at least 30", len(badCases))
	}
}

// A run's size is cases × targets × epochs; one past spec.MaxCalls is a
// spec problem at run.epochs, before anything is stored or called.
func TestTooManyCallsIsASpecProblem(t *testing.T) {
	sp := &spec.Spec{File: "s.yaml", Targets: []spec.Target{{Name: "a"}, {Name: "b"}}, Run: spec.RunConfig{Epochs: spec.MaxEpochs}}
	if ps := checkCalls(sp, spec.MaxCalls/(2*spec.MaxEpochs)); ps != nil {
		t.Fatalf("a run of exactly %d calls is allowed, got %v", spec.MaxCalls, ps)
	}
	ps := checkCalls(sp, spec.MaxCalls/(2*spec.MaxEpochs)+1)
	want := "s.yaml:1:1: the run would make 100002000 calls (50001 cases × 2 targets × 1000 epochs); at most 100000000 are allowed (use dataset.limit, fewer targets or fewer epochs)"
	if len(ps) != 1 || ps[0].String() != want {
		t.Fatalf("got %v, want %s", ps, want)
	}
}
