# The installed tree: the consumer example builds and runs against it.
add_test(NAME install_consumer
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/install_consumer.sh ${PROJECT_BINARY_DIR}
                 ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/install_consumer
                 ${CMAKE_INSTALL_LIBDIR} ${CMAKE_C_COMPILER})
