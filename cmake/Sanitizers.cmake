# ASan + UBSan for the whole build when SINTER_SANITIZE is on (CI runs the unit tests this way).
if(SINTER_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
