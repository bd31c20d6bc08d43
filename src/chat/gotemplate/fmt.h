// Go's fmt package for template values: Sprint, Sprintln and Sprintf with the verbs and flags
// templates use, printing composite values the way `%v` does (map[k:v], [a b], {f1 f2}, <nil>),
// calling String() on types that have it, and reporting bad verbs inline as Go does
// (`%!d(string=x)`). Also strconv.Quote and the float formats that several of these share.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "chat/gotemplate/strconv.h"
#include "chat/gotemplate/value.h"

namespace sinter::chat::gotemplate {

// fmt.Sprint / Sprintln / Sprintf. Arguments are what a Go `...any` receives: an interface value
// is passed as its dynamic value, and an invalid value is a nil interface.
std::string go_sprint(const std::vector<Value>& args);
std::string go_sprintln(const std::vector<Value>& args);
std::string go_sprintf(std::string_view format, const std::vector<Value>& args);

}  // namespace sinter::chat::gotemplate
