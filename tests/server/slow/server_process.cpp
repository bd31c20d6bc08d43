#include "server_process.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/process.h"
#include "support/test_paths.h"

namespace sinter::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Reads one line from `fd` within `timeout`; empty when none came.
std::string read_line(int fd, std::chrono::seconds timeout) {
  std::string line;
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    char c;
    const ssize_t n = ::read(fd, &c, 1);
    if (n == 1) {
      if (c == '\n') return line;
      line += c;
    } else if (n == 0) {
      return line;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } else if (errno != EINTR) {
      return line;
    }
  }
  return line;
}

}  // namespace

std::unique_ptr<ServerProcess> ServerProcess::start(const std::vector<std::string>& args,
                                                    bool require_ready) {
  // A server that closes a connection must not kill the test with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  auto server = std::unique_ptr<ServerProcess>(new ServerProcess());
  static int counter = 0;
  // Beside the tests' scratch folders (scratch_dir() would empty this test's own folder).
  const auto logs = std::filesystem::temp_directory_path() / ("sinter-test-" + std::to_string(getpid()));
  std::filesystem::create_directories(logs);
  server->log_path_ = (logs / ("server-" + std::to_string(counter++) + ".log")).string();
  std::vector<std::string> argv_strings{sinter_binary(), "serve"};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  argv_strings.insert(argv_strings.end(), {"--host", "127.0.0.1", "--port", "0"});
  int out[2];
  if (pipe(out) != 0) {
    ADD_FAILURE() << "pipe failed";
    return nullptr;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    const int log = ::open(server->log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log >= 0) dup2(log, STDERR_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    std::vector<char*> argv;
    for (auto& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  ::close(out[1]);
  server->pid_ = pid;
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  const std::string line = read_line(out[0], std::chrono::seconds(60));
  ::close(out[0]);
  const std::string marker = "listening on http://127.0.0.1:";
  const size_t at = line.find(marker);
  if (at == std::string::npos) {
    ADD_FAILURE() << "sinter serve did not start: '" << line << "'\n" << server->log();
    return nullptr;
  }
  server->port_ = std::stoi(line.substr(at + marker.size()));
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (Clock::now() < deadline) {
    const HttpAnswer health = http_get(*server, "/health");
    if (health.status == 200 || (!require_ready && health.status > 0)) return server;
    if (health.status == 500) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ADD_FAILURE() << "sinter serve did not become ready\n" << server->log();
  return nullptr;
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) stop();
}

bool ServerProcess::running() {
  if (pid_ <= 0) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

int ServerProcess::stop() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  int status = 0;
  while (Clock::now() < deadline) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return -1;
}

std::string ServerProcess::log() const {
  std::ifstream file(log_path_);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::unique_ptr<httplib::Client> ServerProcess::client(int read_timeout_seconds) const {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", port_);
  client->set_read_timeout(read_timeout_seconds, 0);
  client->set_write_timeout(30, 0);
  client->set_connection_timeout(10, 0);
  return client;
}

Json HttpAnswer::json() const {
  Json value = Json::parse(body, nullptr, false);
  if (value.is_discarded()) {
    ADD_FAILURE() << "not JSON (status " << status << "): " << body.substr(0, 500);
    return nullptr;
  }
  return value;
}

std::string HttpAnswer::header(const std::string& key) const {
  const auto it = headers.find(key);
  return it == headers.end() ? std::string() : it->second;
}

namespace {

HttpAnswer to_answer(const httplib::Result& result) {
  HttpAnswer answer;
  if (!result) return answer;
  answer.status = result->status;
  answer.body = result->body;
  answer.headers = result->headers;
  return answer;
}

}  // namespace

HttpAnswer http_get(const ServerProcess& server, const std::string& path) {
  return to_answer(server.client()->Get(path));
}

HttpAnswer http_post(const ServerProcess& server, const std::string& path, const std::string& body,
                     const std::string& content_type) {
  return to_answer(server.client()->Post(path, body, content_type));
}

HttpAnswer http_post(const ServerProcess& server, const std::string& path, const Json& body) {
  return http_post(server, path, body.dump());
}

StreamAnswer http_stream(const ServerProcess& server, const std::string& path, const Json& body, bool sse,
                         const std::function<bool(const Json&)>& keep_going) {
  StreamAnswer answer;
  auto client = server.client();
  const auto start = Clock::now();
  std::string pending;
  httplib::Request request;
  request.method = "POST";
  request.path = path;
  request.body = body.dump();
  request.set_header("Content-Type", "application/json");
  request.response_handler = [&](const httplib::Response& response) {
    answer.status = response.status;
    answer.content_type = response.get_header_value("Content-Type");
    return true;
  };
  request.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    if (answer.status != 200) {
      answer.error_body.append(data, size);
      return true;
    }
    answer.raw.append(data, size);
    pending.append(data, size);
    const std::string separator = sse ? "\n\n" : "\n";
    for (size_t end; (end = pending.find(separator)) != std::string::npos;) {
      std::string item = pending.substr(0, end);
      pending.erase(0, end + separator.size());
      if (sse) {
        if (item.rfind(":", 0) == 0) continue;  // an SSE comment (keep-alive)
        if (item.rfind("data: ", 0) != 0) {
          ADD_FAILURE() << "not an SSE data line: " << item;
          continue;
        }
        item = item.substr(6);
        if (item == "[DONE]") {
          answer.done_marker = true;
          continue;
        }
        if (answer.done_marker) ADD_FAILURE() << "data after [DONE]: " << item;
      }
      Json object = Json::parse(item, nullptr, false);
      if (object.is_discarded()) {
        ADD_FAILURE() << "not a JSON object: " << item;
        continue;
      }
      answer.objects.push_back(object);
      answer.arrival_seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
      if (keep_going && !keep_going(object)) {
        answer.cancelled = true;
        return false;
      }
    }
    return true;
  };
  client->send(request);
  if (!pending.empty() && !answer.cancelled) ADD_FAILURE() << "the stream ended inside an item: " << pending;
  return answer;
}

double metric_value(const std::string& metrics_text, const std::string& sample) {
  std::istringstream lines(metrics_text);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() > sample.size() && line.compare(0, sample.size(), sample) == 0 &&
        line[sample.size()] == ' ') {
      return std::stod(line.substr(sample.size() + 1));
    }
  }
  return -1;
}

std::string as_json_text(const std::string& text) {
  return Json::parse(Json(text).dump(-1, ' ', false, Json::error_handler_t::replace)).get<std::string>();
}

size_t peak_rss(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  }
  return 0;
}

std::string synth_model(const std::string& dir, const std::string& name, const std::string& dims) {
  const std::string path = dir + "/" + name;
  const CommandResult result =
      run_command(shell_quote(sinter_binary()) + " synth llama " + shell_quote(path) + " --dims " + dims);
  EXPECT_EQ(result.exit_status, 0) << result.err;
  return path;
}

}  // namespace sinter::testing

namespace sinter::testing {

std::string make_models_dir() {
  const std::string dir = scratch_dir() + "/models";
  std::filesystem::create_directories(dir);
  std::filesystem::create_symlink(stories_model(), dir + "/stories260K.gguf");
  synth_model(dir, "random-tiny.gguf", "tiny");
  return dir;
}

}  // namespace sinter::testing
