#include "chat/jinja/globals.h"

#include <cmath>
#include <ctime>

#include "chat/jinja/arguments.h"
#include "chat/jinja/errors.h"
#include "chat/jinja/objects.h"
#include "chat/jinja/python_ops.h"

namespace sinter::chat::jinja {
namespace {

// Jinja2's sandbox refuses ranges longer than this.
constexpr int64_t kMaxRange = 100000;

Result<Value> range_function(Interpreter&, CallArgs args) {
  if (!args.keyword.empty()) return type_error("range() takes no keyword arguments");
  if (args.positional.empty() || args.positional.size() > 3) {
    return type_error(concat("range expected at least 1 argument, got ", args.positional.size()));
  }
  int64_t bounds[3] = {0, 0, 1};
  for (size_t i = 0; i < args.positional.size(); ++i) {
    const Value& v = args.positional[i];
    if (!v.is_integral())
      return type_error(concat("'", type_name(v), "' object cannot be interpreted as an integer"));
  }
  if (args.positional.size() == 1) {
    bounds[1] = args.positional[0].as_int();
  } else {
    bounds[0] = args.positional[0].as_int();
    bounds[1] = args.positional[1].as_int();
    if (args.positional.size() == 3) bounds[2] = args.positional[2].as_int();
  }
  int64_t start = bounds[0], stop = bounds[1], step = bounds[2];
  if (step == 0) return value_error("range() arg 3 must not be zero");
  // Count in floating point first: the bounds may be anywhere in int64.
  double span = step > 0 ? static_cast<double>(stop) - static_cast<double>(start)
                         : static_cast<double>(start) - static_cast<double>(stop);
  double count = span <= 0 ? 0 : std::ceil(span / std::fabs(static_cast<double>(step)));
  if (count > kMaxRange) {
    return overflow_error(
        concat("Range too big. The sandbox blocks ranges larger than MAX_RANGE (", kMaxRange, ")."));
  }
  std::vector<Value> items;
  for (int64_t i = 0, value = start; i < static_cast<int64_t>(count); ++i, value += step)
    items.emplace_back(value);
  Value range = Value::sequence(std::move(items), ListFlavor::kRange);
  range.list_ptr()->range_start = start;
  range.list_ptr()->range_stop = stop;
  range.list_ptr()->range_step = step;
  return range;
}

// dict(mapping_or_pairs, **kwargs), also what namespace() takes.
Result<std::shared_ptr<Dict>> make_dict(const char* function, const CallArgs& args) {
  auto dict = std::make_shared<Dict>();
  if (args.positional.size() > 1)
    return type_error(concat(function, " expected at most 1 argument, got ", args.positional.size()));
  if (!args.positional.empty()) {
    const Value& source = args.positional[0];
    if (source.is_dict()) {
      *dict = source.as_dict();
    } else {
      SINTER_ASSIGN(std::vector<Value> pairs, iterate(source));
      for (size_t i = 0; i < pairs.size(); ++i) {
        SINTER_ASSIGN(std::vector<Value> kv, iterate(pairs[i]));
        if (kv.size() != 2) {
          return value_error(concat("dictionary update sequence element #", i, " has length ", kv.size(),
                                    "; 2 is required"));
        }
        SINTER_TRY(require_hashable(kv[0]));
        dict->set(kv[0], kv[1]);
      }
    }
  }
  for (const auto& [key, value] : args.keyword) dict->set(Value(key), value);
  return dict;
}

Result<Value> dict_function(Interpreter&, CallArgs args) {
  SINTER_ASSIGN(auto dict, make_dict("dict", args));
  return Value(std::move(dict));
}

Result<Value> namespace_function(Interpreter& interpreter, CallArgs args) {
  SINTER_ASSIGN(auto dict, make_dict("Namespace", args));
  auto ns = std::make_shared<Namespace>();
  SINTER_TRY(check_nesting(Value(dict)));
  for (const auto& [key, value] : dict->entries()) {
    if (!key.is_string()) return type_error("keywords must be strings");
    ns->set_attribute(key.as_string(), value);
  }
  interpreter.track(ObjectPtr(ns));
  return Value(ObjectPtr(std::move(ns)));
}

Result<Value> cycler_function(Interpreter& interpreter, CallArgs args) {
  if (args.positional.empty()) return type_error("at least one item has to be provided");
  auto cycler = std::make_shared<Cycler>(std::move(args.positional));
  interpreter.track(ObjectPtr(cycler));
  return Value(ObjectPtr(std::move(cycler)));
}

Result<Value> joiner_function(Interpreter&, CallArgs args) {
  SINTER_ASSIGN(auto a, BoundArguments::bind("joiner", args, {"sep"}));
  std::string separator = to_str(a.get(0, Value(", ")));
  auto used = std::make_shared<bool>(false);
  return make_function("joiner", [separator, used](Interpreter&, CallArgs call_args) -> Result<Value> {
    SINTER_TRY(expect_no_arguments("joiner", call_args));
    if (!*used) {
      *used = true;
      return Value("");
    }
    return Value(separator);
  });
}

// Hugging Face: raise TemplateError(message).
Result<Value> raise_exception_function(Interpreter&, CallArgs args) {
  SINTER_ASSIGN(auto a, BoundArguments::bind("raise_exception", args, {"message"}, 1));
  return raised_error(to_str(a.get(0)));
}

// Hugging Face: datetime.now().strftime(format), in local time.
Result<Value> strftime_now_function(Interpreter& interpreter, CallArgs args) {
  SINTER_ASSIGN(auto a, BoundArguments::bind("strftime_now", args, {"format"}, 1));
  Value format_value = a.get(0);
  if (!format_value.is_string()) {
    return type_error(concat("strftime() argument 1 must be str, not ", type_name(format_value)));
  }
  auto now = interpreter.options().now.value_or(std::chrono::system_clock::now());
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
  std::tm local{};
  localtime_r(&seconds, &local);
  const std::string& format = format_value.as_string();
  std::string out;
  std::string chunk;
  auto flush = [&]() {
    if (chunk.empty()) return;
    char buffer[1024];
    size_t n = std::strftime(buffer, sizeof buffer, chunk.c_str(), &local);
    out.append(buffer, n);
    chunk.clear();
  };
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '%' && i + 1 < format.size()) {
      if (format[i + 1] == 'f') {
        flush();
        char buffer[16];
        std::snprintf(buffer, sizeof buffer, "%06lld", static_cast<long long>(micros));
        out += buffer;
        ++i;
        continue;
      }
      chunk += format[i];
      chunk += format[++i];
      if (chunk.size() > 500) flush();
      continue;
    }
    chunk += format[i];
    if (chunk.size() > 500) flush();
  }
  flush();
  return Value(std::move(out));
}

}  // namespace

void add_builtin_globals(Scope* scope) {
  scope->set("range", make_function("range", range_function));
  scope->set("dict", make_function("dict", dict_function));
  scope->set("namespace", make_function("namespace", namespace_function));
  scope->set("cycler", make_function("cycler", cycler_function));
  scope->set("joiner", make_function("joiner", joiner_function));
  scope->set("raise_exception", make_function("raise_exception", raise_exception_function));
  scope->set("strftime_now", make_function("strftime_now", strftime_now_function));
}

}  // namespace sinter::chat::jinja
