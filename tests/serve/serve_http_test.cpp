// `swarmt serve` end to end: a real server process on a free loopback port, spoken to over HTTP. Every
// wait is bounded (client timeouts, counted requests).
#include <httplib.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <ATen/ATen.h>  // test_util.h needs it (this file is built without the precompiled header)

#include "crash_safety/kill_harness.h"
#include "swarmt/core/json.h"
#include "test_util.h"

namespace swarmt::serve_http_test {
namespace {

using swarmt::testing::TempDir;
using swarmt::testing::write_file;

// A tiny SWAX model (mLSTM + sliding window) with the byte tokenizer and a ChatML chat template.
std::string make_served_model(const TempDir& tmp) {
  write_file(tmp.file("config.json"), R"({"model_type": "swax", "hidden_size": 32, "layer_pattern": "MS",
    "num_hidden_layers": 2, "num_attention_heads": 2, "head_dim": 16, "sliding_window": 16, "mlstm_num_heads": 2,
    "mlstm_qk_head_dim": 8, "mlstm_v_head_dim": 16, "intermediate_size": 64})");
  const std::string dir = tmp.file("tiny-swax");
  auto init = swarmt::testing::run_swarmt("-q model init " + tmp.file("config.json") + " --out " + dir + " --seed 5");
  EXPECT_EQ(init.exit_code, 0) << init.err;
  Json config = read_json_file(dir + "/tokenizer_config.json");
  config["chat_template"] =
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + "
      "'\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
  write_file(dir + "/tokenizer_config.json", config.dump());
  return dir;
}

// `swarmt serve` started on port 0; the port is read from its first line. Killed if still running at the end.
class Server {
 public:
  Server(const std::string& model, const std::string& work, const std::string& extra = "") : log_(work + "/serve.log") {
    const std::string command = std::string("exec ") + SWARMT_BINARY + " --threads 2 serve --model " + model +
                                " --port 0 --parallel 10 --state-dir " + work + "/states " + extra + " > " + log_ +
                                " 2> " + work + "/serve.err";
    pid_ = swarmt::testing::spawn_command({"/bin/sh", "-c", command});
    for (int i = 0; i < 600 && port_ == 0; ++i) {  // up to 60 s for the model to load
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {  // it ended: a start-up error
        pid_ = -1;
        break;
      }
      std::ifstream in(log_);
      std::string line;
      if (std::getline(in, line) && line.rfind("listening on http://127.0.0.1:", 0) == 0)
        port_ = std::stoi(line.substr(line.rfind(':') + 1));
    }
    if (port_ == 0) ADD_FAILURE() << "the server did not start: " << read_text_file(work + "/serve.err");
  }
  ~Server() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      swarmt::testing::wait_child(pid_);
    }
  }
  void signal(int signal) const { ::kill(pid_, signal); }
  // Waits for it to end (after a signal), and how it ended.
  swarmt::testing::ChildExit wait() {
    auto end = swarmt::testing::wait_child(pid_);
    pid_ = -1;
    return end;
  }
  httplib::Client client(const std::string& api_key = "") const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(120, 0);
    c.set_connection_timeout(10, 0);
    if (!api_key.empty()) c.set_bearer_token_auth(api_key);
    return c;
  }
  int port() const { return port_; }

 private:
  std::string log_;
  pid_t pid_ = -1;
  int port_ = 0;
};

struct Reply {
  int status = 0;
  Json body;
};

Reply post(const Server& server, const std::string& path, const std::string& body, const std::string& api_key = "") {
  auto c = server.client(api_key);
  auto res = c.Post(path.c_str(), body, "application/json");
  if (!res) return {-1, nullptr};
  return {res->status, Json::parse(res->body, nullptr, false)};
}

Reply get(const Server& server, const std::string& path, const std::string& api_key = "") {
  auto c = server.client(api_key);
  auto res = c.Get(path.c_str());
  if (!res) return {-1, nullptr};
  return {res->status, Json::parse(res->body, nullptr, false)};
}

std::vector<int64_t> ids_of(const Reply& r) {
  EXPECT_EQ(r.status, 200) << r.body.dump();
  return r.body["choices"][0]["token_ids"].get<std::vector<int64_t>>();
}

// A greedy completion on token ids that never stops early.
Json greedy_ids(const std::vector<int64_t>& prompt, int max_tokens, const std::string& session = "") {
  Json body{{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}, {"ignore_eos", true}, {"return_tokens", true}};
  if (!session.empty()) body["session_id"] = session;
  return body;
}

std::vector<int64_t> concat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The data lines of a server-sent event stream, each parsed ("[DONE]" kept as a string).
std::vector<Json> sse_events(const std::string& text) {
  std::vector<Json> events;
  size_t at = 0;
  while ((at = text.find("data: ", at)) != std::string::npos) {
    const size_t end = text.find("\n\n", at);
    const std::string data = text.substr(at + 6, end - at - 6);
    events.push_back(data == "[DONE]" ? Json("[DONE]") : Json::parse(data));
    at = end;
  }
  return events;
}

class ServeHttp : public ::testing::Test {
 protected:
  void SetUp() override { model_ = make_served_model(tmp_); }
  TempDir tmp_;
  std::string model_;
};

TEST_F(ServeHttp, answers_health_models_completions_and_chat_in_openai_shapes) {
  Server server(model_, tmp_.path());
  EXPECT_EQ(get(server, "/health").body["status"], "ok");
  const Reply models = get(server, "/v1/models");
  EXPECT_EQ(models.body["data"][0]["id"], "tiny-swax");
  const Reply completion = post(server, "/v1/completions", R"({"model": "tiny-swax", "prompt": "Hello", "max_tokens": 5,
                                                                "temperature": 0})");
  ASSERT_EQ(completion.status, 200) << completion.body.dump();
  EXPECT_EQ(completion.body["object"], "text_completion");
  EXPECT_TRUE(completion.body["choices"][0]["text"].is_string());
  EXPECT_LE(completion.body["usage"]["completion_tokens"].get<int>(), 5);
  EXPECT_EQ(completion.body["usage"]["prompt_tokens"], 5 + 1);  // the byte tokenizer adds <bos>
  const Reply chat = post(server, "/v1/chat/completions",
                          R"({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "temperature": 0.7, "seed": 1})");
  ASSERT_EQ(chat.status, 200) << chat.body.dump();
  EXPECT_EQ(chat.body["object"], "chat.completion");
  EXPECT_EQ(chat.body["choices"][0]["message"]["role"], "assistant");
}

TEST_F(ServeHttp, a_stream_sends_the_text_of_the_same_request_without_streaming) {
  Server server(model_, tmp_.path());
  const std::string request = R"({"prompt": "The cat", "max_tokens": 12, "temperature": 0, "ignore_eos": true)";
  const Reply whole = post(server, "/v1/completions", request + "}");
  auto c = server.client();
  auto res = c.Post("/v1/completions", request + R"(, "stream": true, "stream_options": {"include_usage": true}})",
                    "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  const auto events = sse_events(res->body);
  ASSERT_GE(events.size(), 3u);
  std::string text;
  for (const auto& e : events)
    if (e.is_object() && !e["choices"].empty()) text += e["choices"][0]["text"].get<std::string>();
  EXPECT_EQ(text, whole.body["choices"][0]["text"].get<std::string>());
  EXPECT_EQ(events.back(), "[DONE]");
  EXPECT_EQ(events[events.size() - 2]["usage"]["completion_tokens"], 12);
  EXPECT_EQ(events[events.size() - 3]["choices"][0]["finish_reason"], "length");
}

TEST_F(ServeHttp, a_session_continues_exactly_like_one_long_request) {
  Server server(model_, tmp_.path());
  const std::vector<int64_t> p1{1, 72, 101, 108, 108, 111, 32}, p2{87, 111, 114, 108, 100};
  const auto g1 = ids_of(post(server, "/v1/completions", greedy_ids(p1, 6, "s").dump()));
  const auto g2 = ids_of(post(server, "/v1/completions", greedy_ids(p2, 6, "s").dump()));
  const auto reference = ids_of(post(server, "/v1/completions", greedy_ids(concat(concat(p1, g1), p2), 6).dump()));
  EXPECT_EQ(g2, reference);
  const Reply sessions = get(server, "/v1/sessions");
  EXPECT_EQ(sessions.body["data"][0]["id"], "s");
  EXPECT_EQ(sessions.body["data"][0]["tokens"], 7 + 6 + 5 + 6);
}

// ARMT streams segment by segment through its memories: a session crossing several segments continues
// like one long request, also after being saved and loaded into another session.
TEST_F(ServeHttp, an_armt_session_continues_across_segments_and_through_a_saved_state) {
  write_file(tmp_.file("llama.json"), R"({"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "intermediate_size": 64, "vocab_size": 259})");
  write_file(tmp_.file("armt.json"), R"({"segment_size": 8, "num_memory_tokens": 2, "d_mem": 8, "memory_layers": "all"})");
  auto base = swarmt::testing::run_swarmt("-q model init " + tmp_.file("llama.json") + " --out " + tmp_.file("base"));
  ASSERT_EQ(base.exit_code, 0) << base.err;
  auto armt = swarmt::testing::run_swarmt("-q armt init --base " + tmp_.file("base") + " --config " +
                                          tmp_.file("armt.json") + " --out " + tmp_.file("armt") + " --merged");
  ASSERT_EQ(armt.exit_code, 0) << armt.err;
  Server server(tmp_.file("armt"), tmp_.path());
  const std::vector<int64_t> p1{1, 72, 101, 108, 108, 111, 32}, p2{87, 111, 114, 108, 100};
  const auto g1 = ids_of(post(server, "/v1/completions", greedy_ids(p1, 6, "s").dump()));
  ASSERT_EQ(post(server, "/v1/sessions/s/save", "").status, 200);
  ASSERT_EQ(post(server, "/v1/sessions/copy/load", R"({"name": "s"})").status, 200);
  const auto g2 = ids_of(post(server, "/v1/completions", greedy_ids(p2, 6, "s").dump()));
  const auto reference = ids_of(post(server, "/v1/completions", greedy_ids(concat(concat(p1, g1), p2), 6).dump()));
  EXPECT_EQ(g2, reference);
  EXPECT_EQ(ids_of(post(server, "/v1/completions", greedy_ids(p2, 6, "copy").dump())), g2);
}

TEST_F(ServeHttp, save_load_and_continue_equals_continuing_without_the_save) {
  Server server(model_, tmp_.path());
  std::vector<int64_t> document;
  for (int i = 0; i < 300; ++i) document.push_back(32 + (i * 7) % 90);
  ids_of(post(server, "/v1/completions", greedy_ids(document, 3, "reader").dump()));
  const Reply saved = post(server, "/v1/sessions/reader/save", R"({"name": "book"})");
  ASSERT_EQ(saved.status, 200) << saved.body.dump();
  EXPECT_TRUE(std::filesystem::exists(tmp_.file("states/book.state")));
  const Reply loaded = post(server, "/v1/sessions/asker/load", R"({"name": "book"})");
  ASSERT_EQ(loaded.status, 200) << loaded.body.dump();
  EXPECT_EQ(loaded.body["tokens"], 303);
  const std::vector<int64_t> question{81, 63};
  EXPECT_EQ(ids_of(post(server, "/v1/completions", greedy_ids(question, 8, "asker").dump())),
            ids_of(post(server, "/v1/completions", greedy_ids(question, 8, "reader").dump())));
  // A session that read 10 times less saves to a file of the same size.
  ids_of(post(server, "/v1/completions", greedy_ids({1, 65, 66}, 27, "short").dump()));
  const Reply short_saved = post(server, "/v1/sessions/short/save", "");
  EXPECT_EQ(short_saved.body["bytes"], saved.body["bytes"]);
}

TEST_F(ServeHttp, bad_requests_get_4xx_errors_naming_the_field_and_the_server_keeps_serving) {
  Server server(model_, tmp_.path(), "--max-body-bytes 65536 --max-tokens 512");
  struct Case {
    std::string path, body;
    int status;
    std::string param;
  };
  const std::vector<Case> cases = {
      {"/v1/completions", "{\"prompt\": ", 400, ""},
      {"/v1/completions", R"({"prompt": "a", "max_tokens": "5"})", 400, "max_tokens"},
      {"/v1/completions", R"({"prompt": "a", "max_tokens": -3})", 400, "max_tokens"},
      {"/v1/completions", R"({"prompt": "a", "max_tokens": 100000000000})", 400, "max_tokens"},
      {"/v1/completions", R"({"prompt": "a", "frobnicate": true})", 400, "frobnicate"},
      {"/v1/completions", "{\"prompt\": \"\xff\xfe\"}", 400, ""},
      {"/v1/completions", R"({"prompt": [1, 5000000]})", 400, "prompt[1]"},
      {"/v1/completions", R"({"prompt": []})", 400, "prompt"},
      {"/v1/completions", R"({"prompt": "a", "session_id": "a/b"})", 400, "session_id"},
      {"/v1/completions", std::string(70000, ' '), 413, ""},
      {"/v1/completions", std::string(60000, '['), 400, ""},
      {"/v1/chat/completions", R"({"messages": "hi"})", 400, "messages"},
      {"/v1/sessions/nobody/save", "", 404, "session_id"},
      {"/v1/sessions/x/load", R"({"name": "never-saved"})", 404, "name"},
      {"/v1/nothing", "{}", 404, ""},
  };
  for (const auto& c : cases) {
    const Reply r = post(server, c.path, c.body);
    EXPECT_EQ(r.status, c.status) << c.path << " " << c.body.substr(0, 80) << " -> " << r.body.dump();
    ASSERT_TRUE(r.body.is_object() && r.body.contains("error")) << c.body.substr(0, 80);
    EXPECT_TRUE(r.body["error"]["message"].is_string());
    if (!c.param.empty()) {
      EXPECT_EQ(r.body["error"]["param"], c.param) << c.body.substr(0, 80);
    }
  }
  // A tampered state file is refused by its checksum.
  ids_of(post(server, "/v1/completions", greedy_ids({1, 70, 71}, 2, "t").dump()));
  ASSERT_EQ(post(server, "/v1/sessions/t/save", "").status, 200);
  {
    std::fstream f(tmp_.file("states/t.state"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-5, std::ios::end);
    f.put('\x7f');
  }
  const Reply tampered = post(server, "/v1/sessions/u/load", R"({"name": "t"})");
  EXPECT_EQ(tampered.status, 400);
  EXPECT_NE(tampered.body["error"]["message"].get<std::string>().find("checksum"), std::string::npos);
  // Still serving.
  EXPECT_EQ(post(server, "/v1/completions", R"({"prompt": "ok", "max_tokens": 2})").status, 200);
}

TEST_F(ServeHttp, a_busy_session_is_refused_and_a_client_leaving_mid_stream_leaves_it_consistent) {
  Server server(model_, tmp_.path());
  auto c = server.client();
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.set_header("Content-Type", "application/json");
  // return_tokens: a chunk per token, so the server notices the hang-up at its next token.
  req.body = R"({"prompt": "Once", "max_tokens": 4000, "ignore_eos": true, "stream": true, "return_tokens": true,
                 "session_id": "busy"})";
  int second_status = 0;
  int chunks = 0;
  req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) {
    if (++chunks == 1) second_status = post(server, "/v1/completions", R"({"prompt": "x", "session_id": "busy"})").status;
    return chunks < 3;  // then hang up
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  c.send(req, res, error);
  EXPECT_EQ(second_status, 409);
  // The generation stops soon after the client left; the session answers again.
  Reply after;
  for (int i = 0; i < 100; ++i) {
    after = post(server, "/v1/completions", R"({"prompt": " more", "max_tokens": 2, "session_id": "busy"})");
    if (after.status != 409) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(after.status, 200) << after.body.dump();
  EXPECT_LT(after.body["usage"]["session_tokens"].get<int>(), 4000);
}

TEST_F(ServeHttp, with_an_api_key_every_request_needs_it) {
  Server server(model_, tmp_.path(), "--api-key sekrit");
  EXPECT_EQ(get(server, "/v1/models").status, 401);
  EXPECT_EQ(get(server, "/v1/models", "wrong").status, 401);
  EXPECT_EQ(get(server, "/v1/models", "sekrit").status, 200);
  EXPECT_EQ(post(server, "/v1/completions", R"({"prompt": "a", "max_tokens": 1})", "sekrit").status, 200);
}

TEST_F(ServeHttp, sigterm_lets_the_request_in_flight_finish_then_exits_cleanly) {
  Server server(model_, tmp_.path());
  auto c = server.client();
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.set_header("Content-Type", "application/json");
  req.body = R"({"prompt": "a", "max_tokens": 400, "ignore_eos": true, "stream": true, "return_tokens": true})";
  std::string streamed;
  req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    if (streamed.empty()) server.signal(SIGTERM);  // once the stream is under way
    streamed.append(data, size);
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  c.send(req, res, error);
  const auto end = server.wait();
  EXPECT_TRUE(end.exited && end.exit_code == 0) << end.describe();
  const auto events = sse_events(streamed);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events.back(), "[DONE]");
  EXPECT_EQ(events[events.size() - 2]["choices"][0]["finish_reason"], "length");  // all 400 tokens came
}

TEST_F(ServeHttp, eight_concurrent_sessions_run_without_errors_and_the_server_memory_stays_flat) {
  Server server(model_, tmp_.path());
  constexpr int kSessions = 8, kPerSession = 250;  // 2000 requests
  std::atomic<int> errors{0}, done{0};
  std::atomic<int64_t> rss_after_first_thousand{0};
  std::vector<std::thread> clients;
  for (int s = 0; s < kSessions; ++s) {
    clients.emplace_back([&, s] {
      auto c = server.client();
      const Json body{{"prompt", " next"}, {"max_tokens", 2}, {"session_id", "load-" + std::to_string(s)}};
      for (int i = 0; i < kPerSession; ++i) {
        auto res = c.Post("/v1/completions", body.dump(), "application/json");
        if (!res || res->status != 200) ++errors;
        if (++done == 1000) rss_after_first_thousand = get(server, "/health").body.value("rss_bytes", int64_t(0));
      }
    });
  }
  for (auto& t : clients) t.join();
  const int64_t rss_end = get(server, "/health").body.value("rss_bytes", int64_t(0));
  EXPECT_EQ(errors.load(), 0);
  ASSERT_GT(rss_after_first_thousand.load(), 0);
  EXPECT_LT(static_cast<double>(rss_end), 1.05 * static_cast<double>(rss_after_first_thousand.load()))
      << rss_after_first_thousand.load() << " -> " << rss_end;
  EXPECT_EQ(get(server, "/health").body["sessions"], kSessions);
}

// A full-attention model's KV cache grows with the context: its sessions are held to --ctx-size; and
// sessions past --max-sessions are refused (503) until one is deleted.
TEST_F(ServeHttp, a_full_attention_model_is_held_to_its_context_limit_and_sessions_to_their_maximum) {
  write_file(tmp_.file("llama.json"), R"({"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8, "intermediate_size": 64, "vocab_size": 259})");
  auto init = swarmt::testing::run_swarmt("-q model init " + tmp_.file("llama.json") + " --out " + tmp_.file("llama"));
  ASSERT_EQ(init.exit_code, 0) << init.err;
  Server server(tmp_.file("llama"), tmp_.path(), "--ctx-size 64 --max-sessions 2");
  std::vector<int64_t> prompt(50, 65);
  EXPECT_EQ(post(server, "/v1/completions", greedy_ids(prompt, 14, "a").dump()).status, 200);
  const Reply past = post(server, "/v1/completions", greedy_ids({66}, 1, "a").dump());  // 64 held + 1 + 1
  EXPECT_EQ(past.status, 400);
  EXPECT_EQ(past.body["error"]["code"], "context_length_exceeded");
  EXPECT_EQ(get(server, "/v1/models").body["data"][0]["context_limit"], 64);
  EXPECT_EQ(post(server, "/v1/completions", greedy_ids({66}, 1, "b").dump()).status, 200);
  const Reply third = post(server, "/v1/completions", greedy_ids({66}, 1, "c").dump());
  EXPECT_EQ(third.status, 503);
  EXPECT_EQ(third.body["error"]["code"], "too_many_sessions");
  auto c = server.client();
  auto deleted = c.Delete("/v1/sessions/a");
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted->status, 200);
  EXPECT_EQ(post(server, "/v1/completions", greedy_ids({66}, 1, "c").dump()).status, 200);
}

TEST_F(ServeHttp, the_official_openai_client_runs_completions_chat_and_streams) {
  const std::string fixtures = swarmt::testing::fixtures_dir();
  if (!std::filesystem::exists(fixtures + "/node_modules/openai/package.json") ||
      swarmt::testing::run_shell("node --version").exit_code != 0)
    GTEST_SKIP() << "the openai npm package is not in " << fixtures << " (make fixtures needs the npm registry)";
  Server server(model_, tmp_.path());
  const auto run = swarmt::testing::run_shell("node " + swarmt::testing::test_data("../serve/openai_client.mjs") + " " +
                                              fixtures + " http://127.0.0.1:" + std::to_string(server.port()) + "/v1");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const Json got = Json::parse(run.out.substr(run.out.find('{')));
  EXPECT_EQ(got["model"], "tiny-swax");
  EXPECT_EQ(got["streamed_completion"], got["completion"]);
  EXPECT_EQ(got["streamed_chat"], got["chat"]);
  EXPECT_EQ(got["chat_role"], "assistant");
  EXPECT_LE(got["completion_usage"]["completion_tokens"].get<int>(), 10);
  EXPECT_LE(got["streamed_usage"]["completion_tokens"].get<int>(), 8);
  EXPECT_EQ(got["refused"]["status"], 400);
}

}  // namespace
}  // namespace swarmt::serve_http_test
